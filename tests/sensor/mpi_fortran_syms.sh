#!/bin/sh
# tests/sensor/mpi_fortran_syms.sh - every call of the wrapper tables
# (sensor/mpi*.def) has the Fortran bindings its MPI's callers need
# (sensor/mpi_fortran_gen.awk, sensor/mpi_fortran.c):
#  - Open MPI's library defines mpi_NAME_, mpi_NAME__, mpi_NAME, MPI_NAME
#    (upper case) and ompi_NAME_f: its Fortran layers call PMPI_ directly
#    (a call the generator leaves to a hand-written binding, listed at the
#    end of sensor/mpi_fortran_gen.c, without one is said, not failed: a
#    table line added before its binding);
#  - MPICH's defines mpi_NAME_f08_ for every call whose mpi_f08 binding
#    libmpichfort defines under that name (they call PMPI_ directly), and
#    no mpi_NAME_ (its mpif.h bindings call MPI_NAME: the C wrapper sees
#    them; a second binding would record the call twice).
# Not the calls listed below with the reason they have none (nobind_*),
# nor a table's #if calls where the library lacks their C wrapper.
# Exit 77 when neither sensor library is there. Run from the top build
# directory (make check does).
. "$(dirname "$0")/mpi_lib.sh"
# (not the MPI-4 large-count forms NAME_c: no Fortran binding of ours)
names=$(sed -n 's/^MPI_CALL(\([A-Za-z_]*\),.*/\1/p' "$MPI_TOP_SRCDIR"/sensor/mpi*.def |
	grep -v '_c$')
[ -n "$names" ] || { echo "FAIL: no calls in the tables"; exit 1; }
# The calls of a table's #if (MPI_Isendrecv: MPI_VERSION >= 4) have
# bindings where the MPI has them: where the library has their C wrapper.
guarded=$(awk '/^#if/ { d++ } /^#endif/ { d-- }
	d > 0 && sub(/^MPI_CALL\(/, "") { sub(/,.*/, ""); print }' \
	"$MPI_TOP_SRCDIR"/sensor/mpi*.def | grep -v '_c$')
# Calls with no binding of ours, and why (each an exception of one MPI):
#  - Grequest_start (both): its three callbacks are Fortran procedures,
#    called with Fortran's convention (arguments by reference, ierr last):
#    C callbacks to translate them would be a binding of its own, not
#    written; a Fortran program's generalized requests start untraced.
#  - Buffer_detach (MPICH's mpi_f08 only): its buffer_addr is a
#    TYPE(C_PTR) out-argument there, unlike Open MPI's (whose binding,
#    hand-written, detaches into an address of its own).
nobind_ompi="Grequest_start"
nobind_f08="Grequest_start Buffer_detach"
[ -f "$MPI_PKGLIB_OMPI" ] || [ -f "$MPI_PKGLIB_MPICH" ] || skip "no MPI sensor library"
mpi_tmpdir mpi-fortran-syms
status=0
ncalls=0
for n in $names; do
	ncalls=$((ncalls + 1))
done

if [ -f "$MPI_PKGLIB_OMPI" ]; then
	nm -D --defined-only "$MPI_PKGLIB_OMPI" | awk '{ print $3 }' > "$tmp/ompi"
	# the calls the generator left to hand-written bindings
	sed -n '/^\/\* Not generated/,/\*\//p' "$B/sensor/mpi_fortran_gen.c" |
		tr ' ' '\n' | grep '^[A-Z][a-z_]*$' > "$tmp/hand"
	miss=
	later=
	for n in $names; do
		case " $nobind_ompi " in *" $n "*) continue ;; esac
		if echo "$guarded" | grep -qx "$n" && ! grep -qx "MPI_$n" "$tmp/ompi"; then
			echo "note: Open MPI: no MPI_$n (MPI_VERSION < 4): no bindings"
			continue
		fi
		lc=$(echo "$n" | tr 'A-Z' 'a-z')
		uc=$(echo "$n" | tr 'a-z' 'A-Z')
		for s in "mpi_${lc}_" "mpi_${lc}__" "mpi_$lc" "MPI_$uc" "ompi_${lc}_f"; do
			grep -qx "$s" "$tmp/ompi" && continue
			if grep -qx "$n" "$tmp/hand"; then
				later="$later $s"
			else
				miss="$miss $s"
			fi
		done
	done
	[ -z "$later" ] || echo "note: Open MPI sensor: to write by hand in" \
		"sensor/mpi_fortran.c (untraced from Fortran):$later"
	if [ -n "$miss" ]; then
		echo "FAIL: Open MPI sensor: no Fortran binding$miss"
		status=1
	else
		echo "ok: Open MPI: the Fortran bindings of the $ncalls calls"
	fi
fi

if [ -f "$MPI_PKGLIB_MPICH" ] && [ -n "$MPIF90_MPICH" ] && [ -x "$MPIF90_MPICH" ]; then
	# libmpichfort: the one an mpi_f08 program loads
	mpi_flavour mpich
	mpi_f90 "$MPI_TOP_SRCDIR/tests/sensor/mpi_io_f08.f90" "$tmp/f08"
	fort=$(ldd "$tmp/f08" | awk '$1 ~ /^libmpichfort/ { print $3 }')
	[ -f "$fort" ] || { echo "FAIL: no libmpichfort for $tmp/f08"; exit 1; }
	nm -D --defined-only "$fort" | awk '{ print $3 }' > "$tmp/fort"
	nm -D --defined-only "$MPI_PKGLIB_MPICH" | awk '{ print $3 }' > "$tmp/mpich"
	miss=
	twice=
	nf08=0
	for n in $names; do
		lc=$(echo "$n" | tr 'A-Z' 'a-z')
		case " $nobind_f08 " in *" $n "*)
			grep -qx "mpi_${lc}_f08_" "$tmp/mpich" &&
				twice="$twice mpi_${lc}_f08_(listed as none)"
			continue ;;
		esac
		if grep -qx "mpi_${lc}_f08_" "$tmp/fort"; then
			nf08=$((nf08 + 1))
			grep -qx "mpi_${lc}_f08_" "$tmp/mpich" || miss="$miss mpi_${lc}_f08_"
		fi
		grep -qx "mpi_${lc}_" "$tmp/mpich" && twice="$twice mpi_${lc}_"
	done
	if [ -n "$miss$twice" ]; then
		echo "FAIL: MPICH sensor: no mpi_f08 binding$miss; mpif.h bindings$twice"
		status=1
	else
		echo "ok: MPICH: the $nf08 mpi_f08 bindings that call PMPI_, no mpif.h one"
	fi
fi
exit $status
