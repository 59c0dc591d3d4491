#!/bin/sh
# perfn.sh PTX KERNEL: spill stores per function of KERNEL (entry and its paths)
/usr/local/cuda/bin/ptxas -arch=sm_90a -v $1 -o /dev/null 2>&1 | awk -v w=$2 '
 /Function properties for/ {f=$NF; k=""; if (f==w) k="entry"; else if (match(f, "fz_(vs|vc[0-9]+|sc)_" w "E")) {k=substr(f,RSTART+3,RLENGTH-3-length(w)-2)}}
 /bytes spill stores/ {if (k!="") printf "%s=%s ", k, $5}
 END{print ""}'
