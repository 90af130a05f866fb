#!/usr/bin/env python3
"""Prints a `stellatrain bench ... --out FILE` JSON array as a Markdown table.

usage: bench_table.py FILE [COLUMNS]   (COLUMNS comma separated)
"""
import json,sys
rows=json.load(open(sys.argv[1]))
cols=(sys.argv[2] if len(sys.argv) > 2 else 'name,input,numel,density,median_ms,gbps,vs_torch_topk,vs_memcpy,l2_capture,block_efficiency,count_ratio,threshold_ratio_next,vs_torch_dense_sgd').split(',')
print('| '+' | '.join(cols)+' |')
print('|'+'---|'*len(cols))
for r in rows:
    out=[]
    for c in cols:
        v=r.get(c,'-')
        if isinstance(v,float):
            v=f"{v:.3f}" if abs(v)<100 else f"{v:.0f}"
        out.append(str(v))
    print('| '+' | '.join(out)+' |')
