# bash completion for sframe-gen (installed as
# $(PREFIX)/share/bash-completion/completions/sframe-gen by make install).
_sframe_gen() {
  local cur prev words cword
  _init_completion || return
  local cmd="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      dump|verify|stats|rows|stack|help) cmd=${words[i]}; break ;;
      -*) ;;
      *) break ;;
    esac
  done
  case $prev in
    -o|--output|--report) _filedir; return ;;
    --output-dir|--sysroot) _filedir -d; return ;;
    --pid) return ;;
    --arch) COMPREPLY=($(compgen -W 'x86_64 amd64 aarch64 arm64 aarch64_be s390x' -- "$cur")); return ;;
    --sframe-version) COMPREPLY=($(compgen -W '2 3' -- "$cur")); return ;;
    --v2-layout) COMPREPLY=($(compgen -W '2.44 2.45' -- "$cur")); return ;;
    -j|--jobs|--section-addr|--memory-limit) return ;;
  esac
  local opts
  case $cmd in
    dump) opts='--json --memory-limit --help -h' ;;
    verify) opts='--json --verbose -v --eh-frame --debug-frame --memory-limit --help -h' ;;
    stats) opts='--json --dry-run --jobs -j --eh-frame --debug-frame --gas-compat --share-fres --no-share-fres --merge-fdes --sframe-version --v2-layout --memory-limit --help -h' ;;
    rows) opts='--json --eh-frame --debug-frame --memory-limit --help -h' ;;
    help) COMPREPLY=($(compgen -W 'dump verify stats rows stack' -- "$cur")); return ;;
    stack) opts='--json --sysroot --pid --memory-limit --help -h' ;;
    *) opts='--output -o --output-dir --raw --section-addr --arch --sframe-version --v2-layout
             --share-fres --no-share-fres --merge-fdes --gas-compat --strict --eh-frame --debug-frame --jobs -j
             --preserve-dates -p --memory-limit --sync --quiet -q --report --verbose -v --help -h --version' ;;
  esac
  if [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -z $cmd && $cword -eq 1 ]]; then
    COMPREPLY=($(compgen -W 'dump verify stats rows stack help' -- "$cur"))
    _filedir
  else
    _filedir
  fi
}
complete -F _sframe_gen sframe-gen
