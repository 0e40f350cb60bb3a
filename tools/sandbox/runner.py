"""The program every sandboxed call runs, as ``python -I -S -B -u -c <this file> RESULT_FD UID``.

Standard library only, no project imports: it runs in a bare interpreter that cannot
see the project. It reads one request on stdin, drops to the sandbox uid (when
started as root), lowers its resource limits, replaces the environment with the
tool's own variables, runs the tool, and writes one JSON result to RESULT_FD: a pipe
of its own, so nothing the tool prints on stdout can pass for a result.

Start-up time is most of a call's cost, so this imports only C modules besides
``os``: the request comes as ``marshal`` data (written by the server, never by a
tool), and the result is JSON written with ``_json``; the ``json`` package (which
pulls in ``re`` and ``enum``, about 8 ms) is imported only for non-string returns.
"""

import _json
import _signal  # type: ignore[import-not-found]  # no stub: the C module behind signal
import marshal
import os
import resource
import sys

TOOL_FILENAME = "<tool>"
MAX_DETAIL_CHARS = 2000


RUNNER_PID = os.getpid()


def main() -> None:
    result_fd = int(sys.argv[1])
    sandbox_uid = int(sys.argv[2])
    os.set_inheritable(result_fd, False)  # noqa: FBT003 (positional-only)
    if sandbox_uid >= 0:
        os.setgroups([])
        os.setgid(sandbox_uid)
        os.setuid(sandbox_uid)
    request = marshal.loads(sys.stdin.buffer.read())
    limits = request["limits"]
    _apply_limits(limits)
    os.environ.clear()
    os.environ.update(request["env"])
    cpu_message = f"The tool used more than {limits['cpu_seconds']} s of CPU time and was stopped."
    _signal.signal(
        _signal.SIGXCPU, lambda *_: _finish(result_fd, _failure("cpu", cpu_message), limits["max_result_bytes"])
    )
    _finish(result_fd, _run(request, limits), limits["max_result_bytes"])


def _apply_limits(limits: dict) -> None:
    _set_limit(resource.RLIMIT_CORE, 0, 0)
    _set_limit(resource.RLIMIT_FSIZE, limits["max_file_bytes"], limits["max_file_bytes"])
    _set_limit(resource.RLIMIT_NOFILE, limits["max_open_files"], limits["max_open_files"])
    _set_limit(resource.RLIMIT_NPROC, limits["max_processes"], limits["max_processes"])
    _set_limit(resource.RLIMIT_AS, limits["memory_bytes"], limits["memory_bytes"])
    # The soft limit sends SIGXCPU (answered below); the hard one kills a tool stuck in C code.
    _set_limit(resource.RLIMIT_CPU, limits["cpu_seconds"], limits["cpu_seconds"] + 1)


def _set_limit(which: int, soft: int, hard: int) -> None:
    _, current_hard = resource.getrlimit(which)
    if current_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, current_hard), min(hard, current_hard)
    resource.setrlimit(which, (soft, hard))


def _run(request: dict, limits: dict) -> dict:
    source = request["source"]
    function_name = request["function"]
    label = f"function {function_name}" if function_name else "code"
    namespace = {"__name__": "__tool__", "__builtins__": __builtins__}
    try:
        if function_name is None:
            value = _run_script(source, namespace)
        else:
            exec(compile(source, TOOL_FILENAME, "exec"), namespace)
            function = namespace.get(function_name)
            if not callable(function):
                return _failure("exception", f"The tool's source defines no function named {function_name!r}.")
            value = function(**request["arguments"])
            if type(value).__name__ == "coroutine":
                import asyncio  # only for a coroutine tool: start-up time, see the module docstring

                value = asyncio.run(value)
    except BaseException as exc:
        return _exception_failure(exc, label, source, limits)
    return _success(value, label)


def _run_script(source: str, namespace: dict) -> object:
    """Run ``source`` as a script; the ``repr`` of a final expression is its value."""
    import ast  # only for a script: start-up time, see the module docstring

    tree = ast.parse(source, TOOL_FILENAME)
    last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
    exec(compile(tree, TOOL_FILENAME, "exec"), namespace)
    if not isinstance(last, ast.Expr):
        return None
    value = eval(compile(ast.Expression(last.value), TOOL_FILENAME, "eval"), namespace)
    return None if value is None else repr(value)


def _exception_failure(exc: BaseException, label: str, source: str, limits: dict) -> dict:
    line = None
    frame = exc.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code.co_filename == TOOL_FILENAME:
            line = frame.tb_lineno
        frame = frame.tb_next
    where = f" (tool line {line})" if line else ""
    if isinstance(exc, MemoryError):
        exc.__traceback__ = None  # let the frames holding the allocation go first
        limit_mib = limits["memory_bytes"] // (1024 * 1024)
        return _failure(
            "memory", f"Error executing {label}: MemoryError: the tool exceeded its memory limit of {limit_mib} MiB"
        )
    if isinstance(exc, SystemExit):
        return _failure("crashed", f"Error executing {label}: the tool called exit({exc.code!r}){where}")
    try:
        detail = str(exc)[:MAX_DETAIL_CHARS]
    except BaseException:
        detail = "<the exception's message could not be rendered>"
    failure = _failure("exception", f"Error executing {label}: {type(exc).__name__}: {detail}{where}")
    failure["traceback"] = _format_traceback(exc, source)
    return failure


def _format_traceback(exc: BaseException, source: str) -> str:
    try:
        import linecache  # only after a failure: start-up time, see the module docstring
        import traceback

        linecache.cache[TOOL_FILENAME] = (len(source), None, source.splitlines(keepends=True), TOOL_FILENAME)
        # Leave out this runner's own frames (it runs as "<string>").
        frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename != "<string>"]
        lines = ["Traceback (most recent call last):\n", *traceback.format_list(frames)]
        return "".join([*lines, *traceback.format_exception_only(type(exc), exc)])[-20_000:]
    except BaseException:
        return ""


def _success(value: object, label: str) -> dict:
    if isinstance(value, str):
        return {"ok": True, "value": str(value)}
    import json  # only for a non-string value: start-up time, see the module docstring

    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, OverflowError, RecursionError):
        return _failure(
            "serialization",
            f"Error executing {label}: it returned a {type(value).__name__}, which is not JSON-serializable; "
            "return a str, number, bool, None, list or dict",
        )
    return {"ok": True, "value": value}


def _failure(kind: str, message: str) -> dict:
    return {"ok": False, "kind": kind, "error": message}


def _finish(result_fd: int, envelope: dict, max_bytes: int) -> None:
    if os.getpid() != RUNNER_PID:
        os._exit(1)  # a process the tool forked got here: only the tool's own process answers
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 (contextlib would be one more import on every call)
            stream.flush()
        except BaseException:
            pass
    data = _encode(envelope)
    if len(data) > max_bytes:
        message = f"The tool's return value is {len(data)} bytes as JSON, more than the {max_bytes}-byte limit."
        data = _encode(_failure("result_size", message))
    view = memoryview(data)
    while view:
        view = view[os.write(result_fd, view) :]
    os._exit(0)


def _encode(envelope: dict) -> bytes:
    """JSON (ASCII) of the envelope; without the json package when every value is a str or bool."""
    if all(isinstance(value, str | bool) for value in envelope.values()):
        fields = [f"{_json.encode_basestring_ascii(key)}: {_literal(value)}" for key, value in envelope.items()]
        return ("{" + ", ".join(fields) + "}").encode()
    import json  # only for a non-string value: start-up time, see the module docstring

    return json.dumps(envelope, allow_nan=False).encode()


def _literal(value: str | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _json.encode_basestring_ascii(value)


if __name__ == "__main__":
    main()
