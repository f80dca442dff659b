"""``memdesk serve`` (HTTP API + MCP over HTTP), ``memdesk mcp`` (MCP over stdio) and ``memdesk tokens``."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from core.cli.common import CliError, emit_json, fail_from


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the server and token commands."""
    p = subparsers.add_parser("serve", help="serve the memory over a local HTTP API (and MCP at /mcp)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    p.add_argument("--project", "-p", action="append", metavar="PATH",
                   help="a project folder to serve (repeat for several; default: the current folder)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another name clients may use in the Host header (this machine's LAN name or address, "
                        "when --host is not loopback); repeat for several")
    p.add_argument("--no-mcp", action="store_true", help="do not serve MCP at /mcp")
    p.set_defaults(func=cmd_serve)

    p = subparsers.add_parser("mcp", help="run the MCP server over stdio (for an agent host)")
    p.add_argument("--project", "-p", default=".", metavar="PATH",
                   help="project root folder (default: the current folder)")
    _scope_flags(p, projects=False)
    p.set_defaults(func=cmd_mcp)

    tokens = subparsers.add_parser("tokens", help="create, list and revoke the API tokens of `memdesk serve`")
    actions = tokens.add_subparsers(dest="action", metavar="ACTION", parser_class=type(tokens))
    a = _token_action(actions, "create", "create a token and print it (shown only this once)")
    a.add_argument("name", help="who will use it (an agent host, a script); recorded as the author of its writes")
    _scope_flags(a, projects=True)
    a.set_defaults(func=cmd_tokens_create)
    a = _token_action(actions, "list", "list tokens (names, creation times, first characters)")
    a.set_defaults(func=cmd_tokens_list)
    a = _token_action(actions, "revoke", "revoke a token by name")
    a.add_argument("name")
    a.set_defaults(func=cmd_tokens_revoke)
    tokens.set_defaults(func=lambda _args: (tokens.print_help(), 2)[1])


def _scope_flags(parser: argparse.ArgumentParser, *, projects: bool) -> None:
    parser.add_argument("--scope", choices=("read", "append", "write"), default="write",
                        help="read (read and search), append (also add entries) or write (everything; the default)")
    if projects:
        parser.add_argument("--project", dest="scope_projects", action="append", default=[], metavar="P",
                            help="only this served project (its key or folder); repeat for several (default: all)")
    parser.add_argument("--path", dest="scope_paths", action="append", default=[], metavar="GLOB",
                        help="only documents matching this glob may be changed (a read token: read), e.g. "
                             "'.fusion/agent-memory/bot/**'; repeat for several (default: all)")


def _token_action(actions: argparse._SubParsersAction, name: str, text: str) -> argparse.ArgumentParser:
    parser = actions.add_parser(name, help=text)
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    return parser


def _need_servers() -> None:
    """Fail with one line when the ``servers`` extra is not installed."""
    import importlib.util

    missing = [m for m in ("fastapi", "uvicorn", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        raise CliError(f"the servers need the 'servers' extra (missing: {', '.join(missing)}); install it with "
                       "pip install 'memdesk[servers]' (./run.sh installs it)", 1)


def _served(paths: list[str]):
    from core.server.service import ServedProjects

    try:
        return ServedProjects(paths)
    except ValueError as exc:
        raise CliError(str(exc), 2) from exc


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the projects until interrupted."""
    _need_servers()
    from core.server.http import create_app
    from core.server.runner import bind_socket, is_loopback, make_server
    from core.server.tokens import TokenStore

    served = _served(args.project or ["."])
    tokens = TokenStore()
    try:
        known = tokens.list()
    except Exception as exc:
        raise fail_from(exc) from exc
    if not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port} is not a port number (0-65535)", 2)
    try:
        sock = bind_socket(args.host, args.port)
    except OSError as exc:
        raise CliError(f"cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", 1) from exc
    # The warnings once it listens: a serve that fails says only why, in one line.
    if not is_loopback(args.host):
        print(f"memdesk: warning: listening on {args.host}, not only on this machine: anyone who can reach "
              "it and holds a token can read and write these projects' memory (clients must send a Host of "
              "this machine: add its names with --allow-host)", file=sys.stderr)
    if not known:
        print("memdesk: warning: no tokens yet, so every request will be refused; create one with "
              "`memdesk tokens create NAME`", file=sys.stderr)
    port = sock.getsockname()[1]
    app = create_app(served, tokens, port=port, host=args.host.strip("[]"), mcp=not args.no_mcp,
                     allow_hosts=[h.strip().strip("[]").lower() for h in args.allow_host])
    server = make_server(app, sock)
    watches = _watch_outside_changes(served)  # before it says it serves: a change from then on is kept
    shown = f"[{args.host}]" if ":" in args.host else args.host
    keys = ", ".join(f"{s.key} ({s.root})" for s in served.served)
    print(f"memdesk: serving {keys} on http://{shown}:{port} (API docs /docs"
          f"{'' if args.no_mcp else ', MCP /mcp'}); Ctrl+C stops", file=sys.stderr, flush=True)
    from core.consolidation.scheduled import ScheduledRuns  # Fusion's dream/auto-summarize schedules

    ticker = ScheduledRuns([s.root for s in served.served]).start()
    try:
        with _sigterm_as_interrupt():
            server.run()
    finally:
        ticker.stop()
        for watch in watches:
            watch.stop()
        _record_noticed_now()
    return 0


def _watch_outside_changes(served) -> list:
    """Every served project's documents watched: another program's change keeps the version before
    (core.project.noticed_watch), each document, not only those a client read."""
    from functools import partial

    from core.project.noticed_watch import NoticeWatch

    return [NoticeWatch(partial(served.get, s.key), interval_s=1.0).start(first_look=True) for s in served.served]


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve one project over MCP on stdin/stdout until the client closes it."""
    _need_servers()
    from core.server.access import Access, check_glob
    from core.server.mcp_server import build_mcp_server

    served = _served([args.project])
    try:
        paths = tuple(check_glob(g) for g in args.scope_paths)
    except ValueError as exc:
        raise CliError(str(exc), 2) from exc
    access = Access(None, args.scope, (), paths)
    # stdout carries the protocol: everything else goes to stderr.
    try:
        with _sigterm_as_interrupt():
            build_mcp_server(served, access=access).run("stdio")
    finally:
        _record_noticed_now()
    return 0


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM (``kill``, systemd, ``docker stop``, an MCP host closing) ends a server as Ctrl+C does: its
    ``finally`` blocks and exit hooks run, so the reads and noticed appends still waiting to be written
    (core.storage.readlog, core.server.noticing) are recorded. Without this, SIGTERM's default action ends
    the process at once (uvicorn stops and then raises the signal again), and those were lost."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread (a test calling the command in a thread): nothing to change
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _record_noticed_now() -> None:
    """Outside appends noticed between reads wait a moment to be joined (core.server.noticing): record them
    before the process ends."""
    from core.server import noticing

    noticing.flush()


def cmd_tokens_create(args: argparse.Namespace) -> int:
    """Create a token and print it once."""
    from core.server.tokens import TokenStore

    try:
        token = TokenStore().create(args.name, scope=args.scope, projects=args.scope_projects,
                                    paths=args.scope_paths)
    except Exception as exc:
        raise fail_from(exc) from exc
    if getattr(args, "json", False):
        emit_json({"name": args.name, "token": token, "scope": args.scope, "projects": args.scope_projects,
                   "paths": args.scope_paths})
    else:
        from core.server.tokens import TokenStore as _T

        info = next(t for t in _T().list() if t.name == args.name)
        print(token)
        print(f"memdesk: token {args.name!r} created with scope {info.access.describe()}; it is shown only now "
              "(memdesk keeps only its hash)", file=sys.stderr)
    return 0


def cmd_tokens_list(args: argparse.Namespace) -> int:
    """List the tokens (never their secrets)."""
    from core.server.tokens import TokenStore

    try:
        tokens = TokenStore().list()
    except Exception as exc:
        raise fail_from(exc) from exc
    if getattr(args, "json", False):
        emit_json([t.to_json() for t in tokens])
        return 0
    if not tokens:
        print("no tokens (create one with `memdesk tokens create NAME`)")
    for t in tokens:
        print(f"{t.name:<24} {t.prefix}…  created {t.created_at}  scope: {t.access.describe()}")
    return 0


def cmd_tokens_revoke(args: argparse.Namespace) -> int:
    """Revoke a token: requests carrying it are refused from the next one on."""
    from core.server.tokens import TokenStore

    try:
        TokenStore().revoke(args.name)
    except Exception as exc:
        raise fail_from(exc) from exc
    if getattr(args, "json", False):
        emit_json({"revoked": args.name})
    else:
        print(f"token {args.name!r} revoked")
    return 0
