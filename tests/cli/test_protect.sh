. "$(dirname "$0")/lib.sh"; done_testing
