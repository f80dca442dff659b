#!/usr/bin/env bash
# Set up memdesk in a local virtual environment (first run only), then start it or run its tests.
#   ./run.sh [PATH]      start the app (on the bundled sample project when no PATH is given)
#   ./run.sh test [ARGS] run the test suite headless (extra ARGS go to pytest)
#   ./run.sh cli ARGS    run a headless command, e.g. ./run.sh cli show --project PATH
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
venv="${MEMDESK_VENV:-$here/.venv}"
python="${PYTHON:-python3}"

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi
stamp="$venv/.memdesk-installed"
if [ ! -f "$stamp" ] || [ "$here/pyproject.toml" -nt "$stamp" ]; then
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -e "$here[dev,semantic,servers,postgres]"
    touch "$stamp"
fi

# Named in memdesk's advice when there is no display ("xvfb-run ./run.sh", "./run.sh --screenshot …").
export MEMDESK_COMMAND="${MEMDESK_COMMAND:-$0}"

case "${1:-}" in
    test)
        shift
        cd "$here"
        QT_QPA_PLATFORM=offscreen exec "$venv/bin/python" -m pytest "$@"
        ;;
    cli)
        shift
        exec "$venv/bin/memdesk" "$@"
        ;;
    *)
        exec "$venv/bin/memdesk" "$@"
        ;;
esac
