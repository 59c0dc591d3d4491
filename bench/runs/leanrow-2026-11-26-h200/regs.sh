#!/bin/sh
# regs.sh FUSEC OUTDIR spec... : cached row kernels (rcache>0), sm_90a, ptxas -v:
# registers of the entry, spill stores summed over it and its path functions,
# as built (launch bounds) and with the bounds replaced by .maxnreg 40 and 32
F=$1; O=$2; shift 2; mkdir -p $O
CU=/usr/local/cuda
meas() { # ptx -> "regs:spill" per row kernel
  $CU/bin/ptxas -arch=sm_90a -v $1 -o /dev/null 2>&1 | awk -v ks="$ks" '
   BEGIN{split(ks,a," "); for(i in a) want[a[i]]=1}
   /Function properties for/ {f=$NF; k=""; for (w in want) if (f==w || f ~ ("fz_(vs|vc[0-9]+|sc)_" w "E")) k=w}
   /bytes spill stores/ {if (k!="") sp[k]+=$5}
   /Compiling entry function/ {match($0,/'"'"'[^'"'"']*'"'"'/); e=substr($0,RSTART+1,RLENGTH-2)}
   /Used [0-9]+ registers/ {match($0,/Used [0-9]+/); if (e in want) r[e]=substr($0,RSTART+5,RLENGTH-5)}
   END{for (k in r) print k, r[k] ":" (sp[k]+0)}'
}
for s in "$@"; do n=$(basename $s .fuse)
  ks=$($F --emit=schedule --arch=sm_90a $s 2>/dev/null | awk '/^  kernel .* row space=/{k=$2} /rcache=[1-9]/{if(k!="")print k; k=""}')
  [ -z "$ks" ] && continue
  $F -o $O --arch=sm_90a $s >/dev/null 2>&1 || { echo "$n BUILD-FAIL"; continue; }
  P=$O/$n.sm_90a.ptx
  meas $P | sort > $O/$n.m0
  for c in 40 32; do
    awk -v c=$c '/^\.maxntid 1024, 1, 1$/ {getline nx; if (nx ~ /minnctapersm 1$/) {print ".maxnreg " c; next} print; print nx; next} {print}' $P > $O/$n.c$c.ptx
    meas $O/$n.c$c.ptx | sort > $O/$n.m$c
  done
  join $O/$n.m0 $O/$n.m40 | join - $O/$n.m32
done | awk '{printf "%-26s %8s %8s %8s\n", $1, $2, $3, $4}'
