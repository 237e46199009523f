"""Goldens for logical_axis_rules_test.cc: flax's own logical_to_mesh_axes
(flax.linen.spmd, the function t5x's PjitPartitioner calls) applied to
t5x's four standard rule sets (t5x/partitioning.py
standard_logical_axis_rules, written out below as t5x lists them) and the
logical axes of T5's parameters and activations. Run with flax installed
(pip install flax; 0.12.8 made the committed values):

    python3 make_logical_axis_goldens.py
"""
from flax.linen import spmd

REPLICATED = [(a, None) for a in ('relpos_buckets', 'abspos_buckets', 'length', 'layers',
                                  'stack', 'mlp_activations')]
BASE = [('batch', 'data'), ('vocab', 'model'), ('mlp', 'model'), ('heads', 'model'),
        ('kv', None), ('joined_kv', 'model')]
RULES = {
    (1, 1): [('batch', 'data'), ('vocab', 'model'), ('embed', None), ('mlp', 'model'),
             ('heads', 'model'), ('kv', None), ('joined_kv', 'model')],
    (2, 1): BASE + [('embed', 'model')],
    (1, 2): BASE + [('embed', 'data')],
    (2, 2): BASE + [('embed', 'model'), ('embed', 'data')],
}
AXES = [('vocab', 'embed'), ('embed', 'vocab'), ('embed', 'joined_kv'), ('joined_kv', 'embed'),
        ('embed', 'mlp'), ('mlp', 'embed'), ('embed',), ('heads', 'relpos_buckets'),
        ('batch', 'length', 'embed'), ('batch', 'length', 'mlp'),
        ('batch', 'length', 'heads', 'kv'), ('batch', 'length', 'vocab')]
for (act, param), rules in RULES.items():
    for axes in AXES:
        spec = spmd.logical_to_mesh_axes(axes, rules + REPLICATED)
        print(f'{{{act}, {param}, "{",".join(axes)}", "{spec}"}},')
