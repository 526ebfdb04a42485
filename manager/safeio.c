/*
 * manager/safeio.c - names opened relative to a directory's descriptor,
 * without following links (manager/safeio.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "manager/safeio.h"

int mgr_dir_nofollow(const char *path)
{
	char comp[4096];
	const char *p = path;
	int fd = open(path[0] == '/' ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	while (fd >= 0 && *p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		int next;

		if (n >= sizeof(comp)) {
			close(fd);
			errno = ENAMETOOLONG;
			return -1;
		}
		memcpy(comp, p, n);
		comp[n] = '\0';
		p += n + (slash ? 1 : 0);
		if (!n || !strcmp(comp, "."))
			continue;
		next = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && mgr_is_link(fd, comp))
			errno = ELOOP;
		close(fd);
		fd = next;
	}
	return fd;
}

int mgr_parent_dir(const char *path, int nofollow, const char **base)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	size_t n;

	*base = slash ? slash + 1 : path;
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((n = (size_t)(slash - path)) == 0)
		snprintf(dir, sizeof(dir), "/");
	else if (n >= sizeof(dir)) {
		errno = ENAMETOOLONG;
		return -1;
	} else {
		memcpy(dir, path, n);
		dir[n] = '\0';
	}
	if (!**base) {
		errno = EISDIR;
		return -1;
	}
	return nofollow ? mgr_dir_nofollow(dir) :
	       open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

int mgr_is_link(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

int mgr_create_excl(int dfd, const char *name, int flags, mode_t mode)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			return -1;
		}
		/* a leftover of a run that died: ours to replace */
		if (unlinkat(dfd, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0)
			return -1;
	}
	return openat(dfd, name, flags | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
}
