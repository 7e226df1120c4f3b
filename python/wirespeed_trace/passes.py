"""Graph-to-graph passes: constant folding, common-subexpression elimination, dead-code
elimination. Each pass returns a new :class:`~wirespeed_trace.trace.Graph` and leaves its
input untouched; nodes stay in a topological order (arguments before users).

* ``fold_constants`` evaluates nodes whose arguments are all constants and applies
  algebraic identities (x + 0, x * 1, x * 0, x - x, x * x -> sqr, x == 0 -> iszero,
  boolean identities, select with a constant or repeated choice, range-decided
  comparisons). The nodes it bypasses are left for ``dce`` to remove.
* ``cse`` gives every value one node: nodes with the same op, immediates and arguments
  (either order for commutative ops) are merged into the first.
* ``dce`` keeps only the nodes that an output needs, renumbered densely.
* ``optimize`` repeats the three until the graph stops shrinking.
"""

from __future__ import annotations

from .trace import COMMUTATIVE, Graph


def _copy_shell(graph):
    return Graph(graph.field, graph.n_inputs)


def _remap_outputs(new, old, rep):
    new.outputs = [(kind, rep[n], name) for kind, n, name in old.outputs]


class _Folder:
    """Builds the folded graph node by node (``emit`` simplifies, then appends)."""

    def __init__(self, graph):
        self.g = graph
        self.q = graph.modulus

    def cval(self, i):
        """The constant value of node i (int for F, bool for B), or None."""
        n = self.g.nodes[i]
        if n.op == "const":
            return n.imm[0]
        if n.op == "bconst":
            return bool(n.imm[0])
        return None

    def const(self, v):
        return self.g.const(v)

    def bconst(self, v):
        return self.g.bconst(v)

    def emit(self, op, args, imm=()):
        r = self.simplify(op, args, imm)
        if r is not None:
            return r
        return self.g.add(op, args, imm)

    def simplify(self, op, args, imm):
        q = self.q
        vals = [self.cval(a) for a in args]
        known = all(v is not None for v in vals)
        nodes = self.g.nodes
        if op == "rawlt":
            _inp, k, nbits = imm
            if k <= 0:
                return self.bconst(False)
            if k >= 1 << nbits:
                return self.bconst(True)
            return None
        if op in ("load", "bit", "const", "bconst"):
            return None
        if known:
            return self.evaluate(op, vals)
        if op == "add":
            a, b = args
            if vals[0] == 0:
                return b
            if vals[1] == 0:
                return a
        elif op == "sub":
            a, b = args
            if a == b:
                return self.const(0)
            if vals[1] == 0:
                return a
            if vals[0] == 0:
                return self.emit("neg", (b,))
        elif op == "mul":
            a, b = args
            for x, v in ((a, vals[1]), (b, vals[0])):
                if v == 0:
                    return self.const(0)
                if v == 1:
                    return x
                if v == q - 1:
                    return self.emit("neg", (x,))
            if a == b:
                return self.emit("sqr", (a,))
        elif op == "neg":
            if nodes[args[0]].op == "neg":
                return nodes[args[0]].args[0]
        elif op == "eq":
            a, b = args
            if a == b:
                return self.bconst(True)
            if vals[0] == 0:
                return self.emit("iszero", (b,))
            if vals[1] == 0:
                return self.emit("iszero", (a,))
        elif op == "iszero":
            if nodes[args[0]].op == "neg":
                return self.emit("iszero", (nodes[args[0]].args[0],))
        elif op in ("and", "or"):
            a, b = args
            absorbing = op == "or"  # x | True = True, x & False = False
            if a == b:
                return a
            for x, v in ((a, vals[1]), (b, vals[0])):
                if v is None:
                    continue
                return self.bconst(absorbing) if v == absorbing else x
            if self._negations(a, b):
                return self.bconst(absorbing)
        elif op == "xor":
            a, b = args
            if a == b:
                return self.bconst(False)
            for x, v in ((a, vals[1]), (b, vals[0])):
                if v is False:
                    return x
                if v is True:
                    return self.emit("not", (x,))
            if self._negations(a, b):
                return self.bconst(True)
        elif op == "not":
            if nodes[args[0]].op == "not":
                return nodes[args[0]].args[0]
        elif op == "select":
            c, a, b = args
            if vals[0] is not None:
                return a if vals[0] else b
            if a == b:
                return a
            if nodes[c].op == "not":
                return self.emit("select", (nodes[c].args[0], b, a))
        return None

    def _negations(self, a, b):
        nodes = self.g.nodes
        return (nodes[a].op == "not" and nodes[a].args[0] == b) or (
            nodes[b].op == "not" and nodes[b].args[0] == a
        )

    def evaluate(self, op, vals):
        q = self.q
        if op == "add":
            return self.const(vals[0] + vals[1])
        if op == "sub":
            return self.const(vals[0] - vals[1])
        if op == "mul":
            return self.const(vals[0] * vals[1])
        if op == "sqr":
            return self.const(vals[0] * vals[0])
        if op == "neg":
            return self.const(-vals[0])
        if op == "eq":
            return self.bconst(vals[0] % q == vals[1] % q)
        if op == "iszero":
            return self.bconst(vals[0] % q == 0)
        if op == "parity":
            return self.bconst(vals[0] % q & 1)
        if op == "and":
            return self.bconst(vals[0] and vals[1])
        if op == "or":
            return self.bconst(vals[0] or vals[1])
        if op == "xor":
            return self.bconst(vals[0] != vals[1])
        if op == "not":
            return self.bconst(not vals[0])
        if op == "select":
            return self.const(vals[1] if vals[0] else vals[2])
        raise AssertionError("no evaluation rule for %s" % op)


def fold_constants(graph):
    """Constant folding and algebraic simplification (one forward pass)."""
    out = _copy_shell(graph)
    folder = _Folder(out)
    rep = []
    for node in graph.nodes:
        args = tuple(rep[a] for a in node.args)
        rep.append(folder.emit(node.op, args, node.imm))
    _remap_outputs(out, graph, rep)
    return out


def cse(graph):
    """Common-subexpression elimination by value numbering (one forward pass)."""
    out = _copy_shell(graph)
    table = {}
    rep = []
    for node in graph.nodes:
        args = tuple(rep[a] for a in node.args)
        out_node_key = _key(node.op, args, node.imm)
        hit = table.get(out_node_key)
        if hit is None:
            hit = out.add(node.op, args, node.imm)
            table[out_node_key] = hit
        rep.append(hit)
    _remap_outputs(out, graph, rep)
    return out


def _key(op, args, imm):
    """The value-numbering key: nodes with equal keys compute equal values."""
    if op in COMMUTATIVE and args[0] > args[1]:
        args = (args[1], args[0])
    return (op, args, imm)


def dce(graph):
    """Dead-code elimination: removes every node no output depends on."""
    live = [False] * len(graph.nodes)
    for _kind, n, _name in graph.outputs:
        live[n] = True
    for i in range(len(graph.nodes) - 1, -1, -1):
        if live[i]:
            for a in graph.nodes[i].args:
                live[a] = True
    out = _copy_shell(graph)
    rep = [-1] * len(graph.nodes)
    for i, node in enumerate(graph.nodes):
        if live[i]:
            rep[i] = out.add(node.op, tuple(rep[a] for a in node.args), node.imm)
    _remap_outputs(out, graph, rep)
    return out


def optimize(graph, stats=None, max_rounds=16):
    """fold -> cse -> dce until the node count stops falling. ``stats`` (a dict), if
    given, receives the node counts after the first round of each pass."""
    g = graph
    for round_no in range(max_rounds):
        folded = fold_constants(g)
        merged = cse(folded)
        pruned = dce(merged)
        if stats is not None and round_no == 0:
            stats["nodes_traced"] = len(graph)
            stats["nodes_live"] = len(dce(graph))
            stats["nodes_after_fold"] = len(dce(folded))
            stats["nodes_after_cse"] = len(pruned)
        done = len(pruned) >= len(g) and round_no > 0
        g = pruned
        if done:
            break
    if stats is not None:
        stats["nodes_final"] = len(g)
    return g
