# Sourced by the scripts that set up, build and run klab: puts Python's user-level bin folder on
# PATH, where `pip install --user` (setup.sh's CMake and tools from PyPI, on a machine whose pip
# installs per user) leaves its executables, so that the scripts run after setup.sh find them.
if command -v python3 >/dev/null 2>&1; then
  _klab_user_bin="$(python3 -m site --user-base 2>/dev/null)/bin"
  case ":$PATH:" in *":$_klab_user_bin:"*) ;; *) export PATH="$_klab_user_bin:$PATH" ;; esac
  unset _klab_user_bin
fi
