# sensor/mpi_fortran_gen.awk - writes the Fortran bindings of the MPI
# sensor (sensor/mpi_fortran_gen.c, built) from the wrapper tables.
#
#   awk -f sensor/mpi_fortran_gen.awk sensor/mpi.def sensor/mpi_io.def ...
#
# Each MPI_CALL(NAME, EVENT, PARAMS, ARGS) of the tables becomes one C
# function with the Fortran calling convention (every argument by
# reference, ierr last, a hidden int length after the arguments per
# string) that converts its arguments and calls the C wrapper MPI_NAME, so
# C and Fortran share one recording path. Its names come from F_BIND
# (sensor/mpi_fortran.h: mpi_name_ and its other manglings, and
# ompi_name_f for Open MPI; mpi_name_f08_ for MPICH's mpi_f08). A call
# with a choice buffer (void *) is inside `#if F_CHOICE_BUFFERS`: MPICH's
# mpi_f08 passes those as descriptors and calls MPI_NAME itself.
#
# Parameters, by their C declaration (const ignored):
#   void *x (choice buffer)      void *x          mf_buf(x)
#   void *baseptr                void *baseptr    baseptr
#   void *buffer_addr (an address the call writes): hand-written
#   int / MPI_Aint / MPI_Offset / MPI_Count x    T *x    *x
#   MPI_Aint / MPI_Offset / MPI_Count *x         T *x    x (written in place)
#   int reorder, high (LOGICAL)  MPI_Fint *x      *x != F_FALSE
#   MPI_<handle> x               MPI_Fint *x      PMPI_<h>_f2c(*x)
#   MPI_<handle> *x              MPI_Fint *x      &local, written back when
#                                the call worked; read first when it is the
#                                call's first parameter or Mrecv's message
#   int *x                       MPI_Fint *x      &local, written back (flag:
#                                as a LOGICAL)
#   int x[], x[][3]              MPI_Fint *x      x (the weights: mf_weights(x))
#   const char *x                char *x, int x_len  mf_string(x, x_len)
#                                (a string the call writes: hand-written)
#   MPI_Status *x                MPI_Fint *x      MPI_STATUS_IGNORE or local,
#                                written back with mf_status_out
# In a call with a LOGICAL flag, what it returns besides the flag and the
# handles it reads is written only when the flag is set. Any other
# parameter (arrays of handles or statuses, LOGICAL arrays, 1-based
# indices, argc/argv, callbacks) makes the call's binding a hand-written one
# (sensor/mpi_fortran.c); the file ends with the list of those. The MPI-4
# large-count forms (NAME_c, inside #if MPI_VERSION >= 4) get none.

BEGIN {
	nh = split("Comm Group Info Datatype Op Win File Request Message Errhandler", H, " ")
	for (i = 1; i <= nh; i++)
		handle["MPI_" H[i]] = H[i] == "Datatype" ? "Type" : H[i]
	nulls["Comm"] = "MPI_COMM_NULL"; nulls["Group"] = "MPI_GROUP_NULL"
	nulls["Info"] = "MPI_INFO_NULL"; nulls["Type"] = "MPI_DATATYPE_NULL"
	nulls["Op"] = "MPI_OP_NULL"; nulls["Win"] = "MPI_WIN_NULL"
	nulls["File"] = "MPI_FILE_NULL"; nulls["Request"] = "MPI_REQUEST_NULL"
	nulls["Message"] = "MPI_MESSAGE_NULL"
	nulls["Errhandler"] = "MPI_ERRHANDLER_NULL"
	logical["reorder"] = logical["high"] = 1
	weights["weights"] = weights["sourceweights"] = weights["destweights"] = 1
	print "/*"
	print " * sensor/mpi_fortran_gen.c - the Fortran bindings generated from the"
	print " * wrapper tables by sensor/mpi_fortran_gen.awk. Do not edit: built."
	print " */"
	print "#include \"sensor/mpi_fortran.h\""
	nskip = 0
}

# A table's conditionals (#if MPI_VERSION >= 4 ...) go around its calls'
# bindings as they go around its wrappers.
/^#[ \t]*(if|ifdef|ifndef|elif|else|endif)/ && !inside { print; next }

# Join a call's lines (comments and blank lines out) until its parentheses
# close.
/^MPI_CALL\(/ { call = ""; depth = 0; inside = 1 }
inside {
	line = $0
	sub(/\/\*.*\*\//, "", line)
	call = call " " line
	depth += gsub(/\(/, "(", line) - gsub(/\)/, ")", line)
	if (depth == 0) {
		inside = 0
		emit(call)
	}
}

function trim(s) {
	gsub(/^[ \t]+|[ \t]+$/, "", s)
	gsub(/[ \t]+/, " ", s)
	return s
}

# The top-level parenthesised groups of s (the params and the args).
function groups(s, out,    i, c, d, n, cur) {
	n = 0; d = 0; cur = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "(") {
			d++
			if (d == 2) { cur = ""; continue }
		} else if (c == ")") {
			d--
			if (d == 1) { out[++n] = cur; continue }
		}
		if (d >= 2)
			cur = cur c
	}
	return n
}

function emit(call,    name, g, ng, np, P, i, t, v, arr, ptr, h, lc, fp, pre,
		 cargs, post, flagpost, strs, frees, buf, hasflag, bad, body, isconst,
		 inout) {
	name = call
	sub(/^ *MPI_CALL\( */, "", name)
	sub(/ *,.*/, "", name)
	if (name ~ /_c$/)
		return	# MPI-4 large count: mpi_f08 binds those under other names
	ng = groups(call, g)
	if (ng < 1) { skipped(name); return }
	np = split(g[1], P, ",")
	fp = ""; pre = ""; cargs = ""; post = ""; flagpost = ""; strs = ""
	frees = ""; buf = 0; hasflag = 0; bad = 0
	for (i = 1; i <= np; i++) {
		t = trim(P[i])
		if (t == "void")
			continue
		isconst = sub(/^const /, "", t)
		arr = ""
		if (match(t, /(\[[0-9]*\])+$/)) {
			arr = substr(t, RSTART)
			t = trim(substr(t, 1, RSTART - 1))
		}
		v = t
		sub(/.*[ *]/, "", v)
		t = trim(substr(t, 1, length(t) - length(v)))
		ptr = gsub(/\*/, "", t)
		t = trim(t)
		h = (t in handle) ? handle[t] : ""
		if (cargs != "")
			cargs = cargs ", "
		if (t == "void" && ptr == 1 && arr == "" && v == "buffer_addr") {
			bad = 1	# an address the call writes: hand-written
		} else if (t == "void" && ptr == 1 && arr == "") {
			fp = fp "void *" v ", "
			if (v == "baseptr") {
				cargs = cargs v
			} else {
				cargs = cargs "mf_buf(" v ")"
				buf = 1
			}
		} else if (arr != "" && t == "int" && ptr == 0 &&
			   v != "periods" && v != "remain_dims" &&
			   v !~ /indices/) {
			fp = fp "MPI_Fint *" v ", "
			if (arr == "[][3]")
				cargs = cargs "(int (*)[3])" v
			else if (v in weights)
				cargs = cargs "mf_weights(" v ")"
			else
				cargs = cargs v
		} else if (arr != "") {
			bad = 1
		} else if (ptr == 0 && (t == "int" || t == "MPI_Aint" ||
					t == "MPI_Offset" || t == "MPI_Count")) {
			fp = fp (t == "int" ? "MPI_Fint" : t) " *" v ", "
			cargs = cargs ((v in logical) ? "*" v " != F_FALSE" : "*" v)
		} else if (ptr == 1 && (t == "MPI_Aint" || t == "MPI_Offset" ||
					t == "MPI_Count") && !isconst) {
			# INTEGER(KIND=MPI_ADDRESS_KIND / MPI_OFFSET_KIND /
			# MPI_COUNT_KIND) out: the same 8 bytes, written in place
			fp = fp t " *" v ", "
			cargs = cargs v
		} else if (ptr == 0 && h != "") {
			fp = fp "MPI_Fint *" v ", "
			cargs = cargs "PMPI_" h "_f2c(*" v ")"
		} else if (ptr == 1 && h != "") {
			fp = fp "MPI_Fint *" v ", "
			inout = i == 1 || (h == "Message" && name ~ /^I?[Mm]recv$/)
			if (inout)
				pre = pre "\t" t " v_" v " = PMPI_" h "_f2c(*" v ");\n"
			else
				pre = pre "\t" t " v_" v " = " nulls[h] ";\n"
			cargs = cargs "&v_" v
			if (inout)
				post = post "\t\t*" v " = PMPI_" h "_c2f(v_" v ");\n"
			else
				flagpost = flagpost "\t\t*" v " = PMPI_" h "_c2f(v_" v ");\n"
		} else if (ptr == 1 && t == "int" && v != "index" &&
			   v != "outcount" && v != "argc") {
			fp = fp "MPI_Fint *" v ", "
			pre = pre "\tint v_" v " = 0;\n"
			cargs = cargs "&v_" v
			if (v == "flag") {
				hasflag = 1
				post = post "\t\t*" v " = v_" v " ? F_TRUE : F_FALSE;\n"
			} else {
				flagpost = flagpost "\t\t*" v " = v_" v ";\n"
			}
		} else if (ptr == 1 && t == "char" && isconst) {
			fp = fp "char *" v ", "
			strs = strs ", int " v "_len"
			pre = pre "\tchar *s_" v " = mf_string(" v ", " v "_len);\n"
			cargs = cargs "s_" v
			frees = frees " || !s_" v
		} else if (ptr == 1 && t == "MPI_Status" && !isconst) {
			fp = fp "MPI_Fint *" v ", "
			pre = pre "\tMPI_Status c_" v ", *v_" v " = mf_status_ignored(" v ") ?\n\t\tMPI_STATUS_IGNORE : &c_" v ";\n"
			cargs = cargs "v_" v
			flagpost = flagpost "\t\tmf_status_out(v_" v ", " v ");\n"
		} else {
			bad = 1
		}
	}
	if (bad) { skipped(name); return }
	lc = tolower(name)
	body = ""
	if (buf)
		body = body "#if F_CHOICE_BUFFERS\n"
	body = body "F_BIND(mpi_" lc ", MPI_" toupper(name) ", " lc ",\n       (" fp "MPI_Fint *ierr" strs "))\n{\n"
	body = body pre "\tint rc;\n\n"
	if (frees != "") {
		sub(/^ \|\| /, "", frees)
		body = body "\tif (" frees ") {\n\t\trc = MPI_ERR_NO_MEM;\n\t\tgoto out;\n\t}\n"
	}
	body = body "\trc = MPI_" name "(" cargs ");\n"
	if (post != "" || flagpost != "") {
		body = body "\tif (rc == MPI_SUCCESS) {\n" post
		if (flagpost != "" && hasflag)
			body = body "\t}\n\tif (rc == MPI_SUCCESS && v_flag) {\n"
		body = body flagpost "\t}\n"
	}
	if (frees != "") {
		body = body "out:\n"
		np = split(strs, P, ", int ")
		for (i = 2; i <= np; i++) {
			v = P[i]
			sub(/_len$/, "", v)
			body = body "\tfree(s_" v ");\n"
		}
	}
	body = body "\tmf_ierr(ierr, rc);\n}\n"
	if (buf)
		body = body "#endif\n"
	print ""
	printf "%s", body
}

function skipped(name) {
	skip[++nskip] = name
}

END {
	print ""
	print "/* Not generated (hand-written in sensor/mpi_fortran.c, or no Fortran"
	print " * binding):"
	line = " *"
	for (i = 1; i <= nskip; i++) {
		if (length(line) + length(skip[i]) > 75) {
			print line
			line = " *"
		}
		line = line " " skip[i]
	}
	print line
	print " */"
}
