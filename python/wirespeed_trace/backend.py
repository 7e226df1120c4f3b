"""From an optimized graph to a program: scheduling, register allocation, emission.

**Scheduling.** A schedule is a list of items ``("n", node)`` (compute a node) and
``("o", slot)`` (write an output). Candidates are the graph's own order and
depth-first orders from the outputs (every output order when there are at most four
outputs, else the given order and its reverse), visiting a node's operands largest
Sethi-Ullman number first, so a deep operand is finished before a shallow one is held,
each output written as soon as its value exists. Constants and input loads thus sit
just before their first user. The candidate needing the fewest registers wins (ties:
the first), so the result never needs more registers than the traced order.

**Register allocation.** Linear scan over the schedule: at each node, the registers of
operands used for the last time are released first, then the lowest free register is
taken for the result (so a result may reuse an operand's register; the VM reads
operands before it writes). On straight-line code every value is one interval, and
lowest-free-first on intervals uses exactly the maximum number of values live at once,
which is the count reported. A program needing more registers than the file has is
refused with :class:`RegisterFileError`; nothing is spilled.
"""

from __future__ import annotations

import heapq
from itertools import permutations

from .field import FIELD_ID_GENERIC
from .program import MAX_REGISTERS, Program


class RegisterFileError(Exception):
    """The program needs more registers than the register file has."""

    def __init__(self, needed, available):
        self.needed = needed
        self.available = available
        super().__init__(
            "the program needs %d registers but the register file has %d; raise the "
            "register count (at most %d) or simplify the program"
            % (needed, available, MAX_REGISTERS)
        )


def _labels(graph):
    """Sethi-Ullman numbers (registers to evaluate a node as if its operands were trees)."""
    need = []
    for node in graph.nodes:
        kids = sorted((need[a] for a in set(node.args)), reverse=True)
        need.append(max([1] + [k + i for i, k in enumerate(kids)]))
    return need


def _dfs_schedule(graph, out_order, need, deep_first=True):
    nodes = graph.nodes
    done = [False] * len(nodes)
    order = []
    for slot in out_order:
        stack = [(graph.outputs[slot][1], False)]
        while stack:
            n, expanded = stack.pop()
            if done[n]:
                continue
            if expanded:
                done[n] = True
                order.append(("n", n))
                continue
            stack.append((n, True))
            kids = sorted(set(nodes[n].args), key=lambda a: (need[a], -a), reverse=deep_first)
            for k in reversed(kids):
                if not done[k]:
                    stack.append((k, False))
        order.append(("o", slot))
    return order


def _graph_order(graph):
    """The graph's own order, each output written right after its last definition."""
    by_node = {}
    for slot, (_k, n, _name) in enumerate(graph.outputs):
        by_node.setdefault(n, []).append(slot)
    order = []
    for i in range(len(graph.nodes)):
        order.append(("n", i))
        order.extend(("o", s) for s in by_node.get(i, ()))
    return order


def schedule(graph):
    """The candidate order needing the fewest registers (see the module note)."""
    need = _labels(graph)
    n_out = len(graph.outputs)
    if n_out <= 4:
        out_orders = list(permutations(range(n_out)))
    else:
        out_orders = [tuple(range(n_out)), tuple(reversed(range(n_out)))]
    candidates = []
    for oo in out_orders:
        candidates.append(_dfs_schedule(graph, oo, need, True))
        candidates.append(_dfs_schedule(graph, oo, need, False))
    candidates.append(_graph_order(graph))
    best, best_regs = None, None
    for cand in candidates:
        regs = allocate(graph, cand, None)[1]
        if best_regs is None or regs < best_regs:
            best, best_regs = cand, regs
    return best


def check_schedule(graph, order):
    """Asserts that ``order`` computes every needed node once, after its operands, and
    writes every output once after its value."""
    seen = set()
    slots = set()
    for kind, v in order:
        if kind == "n":
            assert v not in seen, "node %d scheduled twice" % v
            assert all(a in seen for a in graph.nodes[v].args), "node %d too early" % v
            seen.add(v)
        else:
            assert v not in slots and graph.outputs[v][1] in seen, "output %d misplaced" % v
            slots.add(v)
    assert len(slots) == len(graph.outputs), "an output is missing"


def allocate(graph, order, limit):
    """Linear-scan allocation. Returns ``(register of each node, registers used)``;
    raises RegisterFileError when more than ``limit`` are needed (None: no limit)."""
    last = {}
    for pos, (kind, v) in enumerate(order):
        if kind == "n":
            for a in graph.nodes[v].args:
                last[a] = pos
        else:
            last[graph.outputs[v][1]] = pos
    free = []
    next_new = 0
    reg = {}
    for pos, (kind, v) in enumerate(order):
        if kind == "o":
            n = graph.outputs[v][1]
            if last[n] == pos:
                heapq.heappush(free, reg[n])
            continue
        for a in set(graph.nodes[v].args):
            if last[a] == pos:
                heapq.heappush(free, reg[a])
        if free:
            r = heapq.heappop(free)
        else:
            r = next_new
            next_new += 1
        reg[v] = r
        if v not in last:  # a value nobody reads (not produced by the passes)
            heapq.heappush(free, r)
    if limit is not None and next_new > limit:
        raise RegisterFileError(next_new, limit)
    return reg, next_new


def emit(graph, order, reg, n_registers, output_names=None):
    """The program of a scheduled, allocated graph (constants pooled in first-use order)."""
    field_id = graph.field.FIELD_ID
    pool = {}
    consts = []
    if field_id == FIELD_ID_GENERIC:
        consts.append(graph.modulus)  # constant 0 is the modulus; never referenced

    def cidx(v):
        if v not in pool:
            pool[v] = len(consts)
            consts.append(v)
        return pool[v]

    ins = []
    for kind, v in order:
        if kind == "o":
            okind, n, _name = graph.outputs[v]
            ins.append(("outf" if okind == "F" else "outb", 0, reg[n], v, 0))
            continue
        node = graph.nodes[v]
        op, args, imm, d = node.op, node.args, node.imm, reg[v]
        if op == "load":
            ins.append(("load", d, imm[0], imm[1], 0))
        elif op == "bit":
            ins.append(("bit", d, imm[0], imm[1], 0))
        elif op == "rawlt":
            ins.append(("rawlt", d, imm[0], cidx(imm[1]), imm[2]))
        elif op == "const":
            ins.append(("const", d, cidx(imm[0]), 0, 0))
        elif op == "bconst":
            ins.append(("bconst", d, imm[0], 0, 0))
        else:
            r = [reg[a] for a in args] + [0] * (3 - len(args))
            ins.append((op, d, r[0], r[1], r[2]))
    kinds = [k for k, _n, _name in graph.outputs]
    return Program(field_id, max(1, n_registers), graph.n_inputs, kinds, consts, ins,
                   output_names=output_names)
