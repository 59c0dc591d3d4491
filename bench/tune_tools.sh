#!/bin/sh
# The tuning table's '@' line (tune.h): the device and tools of the run.
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '_')
cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
echo "device=${dev:-unknown} cuda=${cuda:-unknown} date=$(date -u +%Y-%m-%d)"
