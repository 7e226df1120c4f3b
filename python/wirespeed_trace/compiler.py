"""The compiler driver: trace a reference function, optimize, schedule, allocate, emit.

A reference function takes one argument, the list of its inputs, and returns its
outputs: a single value, a tuple/list of values, or a dict from output name to value.
Each value is a field element (output kind ``field``) or a condition (kind ``bool``).
When traced, every input is a :class:`~wirespeed_trace.trace.Raw`; when run as the
reference, every input is the ``int`` of its 32 little-endian bytes.
"""

from __future__ import annotations

import importlib.util
import os

from . import backend, passes
from .field import Fe25519, FieldElement, new_graph
from .trace import Bool, Raw, TraceError

DEFAULT_REGISTERS = 32


def _named_results(result):
    if isinstance(result, dict):
        return list(result.items())
    if isinstance(result, (tuple, list)):
        return [("out%d" % i, v) for i, v in enumerate(result)]
    return [("out0", result)]


def trace_function(fn, inputs=1, field=Fe25519):
    """The unoptimized graph of ``fn`` on ``inputs`` traced inputs."""
    graph, raws = new_graph(field, inputs)
    named = _named_results(fn(raws))
    if not named:
        raise TraceError("the program returns no outputs")
    for name, v in named:
        if isinstance(v, Raw):
            v = v._as_bool()
        if isinstance(v, FieldElement):
            if type(v) is not field:
                raise TraceError("output %r is in %s, the program is over %s"
                                 % (name, v.NAME, field.NAME))
            graph.outputs.append(("F", v._node(graph), name))
        elif isinstance(v, Bool):
            if v._g is not graph:
                raise TraceError("output %r comes from another trace" % name)
            graph.outputs.append(("B", v._n, name))
        elif isinstance(v, bool):
            graph.outputs.append(("B", graph.bconst(v), name))
        else:
            raise TraceError(
                "output %r is %r: return field elements (wrap an int as Field(n)) or "
                "conditions (True/False or traced comparisons)" % (name, v)
            )
    graph.check()
    return graph


def reference(fn, encodings, field=Fe25519):
    """Runs ``fn`` untraced on 32-byte encodings; outputs as the interpreter gives them
    (field elements as 32 canonical bytes, conditions as bool)."""
    ints = [int.from_bytes(bytes(e), "little") for e in encodings]
    out = []
    for name, v in _named_results(fn(ints)):
        if isinstance(v, FieldElement):
            if type(v) is not field:
                raise TraceError("output %r is in %s, not %s" % (name, v.NAME, field.NAME))
            out.append(v.to_bytes())
        elif isinstance(v, int) and v in (0, 1):
            out.append(bool(v))
        else:
            raise TraceError("output %r is %r: not a field element or a condition" % (name, v))
    return out


class Compiled:
    """A compiled program with its optimized graph and the compiler's figures."""

    def __init__(self, program, graph, stats):
        self.program = program
        self.graph = graph
        self.stats = stats

    def summary(self):
        s = self.stats
        return (
            "%d instructions, %d registers (file of %d), %d constants; nodes: %d traced, "
            "%d after folding, %d after CSE, %d final"
            % (s["instructions"], s["registers"], s["register_file"], s["constants"],
               s["nodes_traced"], s["nodes_after_fold"], s["nodes_after_cse"], s["nodes_final"])
        )


def compile_graph(graph, registers=DEFAULT_REGISTERS, stats=None):
    """Optimizes, schedules, allocates and emits an already traced graph."""
    stats = {} if stats is None else stats
    opt = passes.optimize(graph, stats)
    order = backend.schedule(opt)
    backend.check_schedule(opt, order)
    reg, used = backend.allocate(opt, order, registers)
    names = [name for _k, _n, name in opt.outputs]
    program = backend.emit(opt, order, reg, used, output_names=names)
    stats.update(
        instructions=len(program.instructions),
        registers=used,
        register_file=registers,
        constants=len(program.constants),
    )
    return Compiled(program, opt, stats)


def compile_function(fn, inputs=1, field=Fe25519, registers=DEFAULT_REGISTERS):
    """Traces ``fn`` and compiles it for a register file of ``registers`` registers."""
    return compile_graph(trace_function(fn, inputs, field), registers)


class Source:
    """A program source file: it defines ``program(inp)`` and optionally ``INPUTS``
    (default 1) and ``FIELD`` (default Fe25519)."""

    def __init__(self, path, function="program"):
        name = "wirespeed_trace_source_" + os.path.splitext(os.path.basename(path))[0]
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise TraceError("cannot load %s as Python source" % path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.fn = getattr(module, function, None)
        if not callable(self.fn):
            raise TraceError("%s defines no function %r" % (path, function))
        self.inputs = getattr(module, "INPUTS", 1)
        self.field = getattr(module, "FIELD", Fe25519)
        if not isinstance(self.inputs, int) or not 0 <= self.inputs <= 0xFFFF:
            raise TraceError("%s: INPUTS must be an integer in 0..65535" % path)
        if not (isinstance(self.field, type) and issubclass(self.field, FieldElement)
                and self.field.MODULUS is not None):
            raise TraceError("%s: FIELD must be a field class (Fe25519, Scalar, Fp(p))" % path)

    def compile(self, registers=DEFAULT_REGISTERS):
        return compile_function(self.fn, self.inputs, self.field, registers)

    def reference(self, encodings):
        return reference(self.fn, encodings, self.field)
