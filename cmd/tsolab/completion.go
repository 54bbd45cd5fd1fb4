package main

import (
	"fmt"
	"io"
	"strings"
)

// completion prints a shell completion script:
//
//	source <(tsolab completion bash)
//	tsolab completion zsh > "${fpath[1]}/_tsolab"
//	tsolab completion fish > ~/.config/fish/completions/tsolab.fish
//
// The commands and their flags are read from the commands themselves
// (each one's -h), so the scripts never drift from the CLI.
func (c *cli) completion(args []string) int {
	fs := newFlagSet("completion", c.stderr, "completion bash|zsh|fish")
	pos, err := c.parse(fs, args)
	if err != nil {
		return exitError
	}
	if len(pos) != 1 {
		fmt.Fprintln(c.stderr, "Error: name the shell: tsolab completion bash, zsh or fish")
		return exitError
	}
	spec := c.completionSpec()
	var write func(io.Writer, []cmdSpec)
	switch pos[0] {
	case "bash":
		write = writeBashCompletion
	case "zsh":
		write = writeZshCompletion
	case "fish":
		write = writeFishCompletion
	default:
		fmt.Fprintf(c.stderr, "Error: no completion for shell %q: choose bash, zsh or fish\n", pos[0])
		return exitError
	}
	write(c.stdout, spec)
	return exitOK
}

// argKind is what a flag value or positional argument completes to.
type argKind int

const (
	argNone   argKind = iota // a boolean flag: no value
	argAny                   // a value with nothing to offer (-var name=value, -repeat 3)
	argFile                  // a file name
	argDir                   // a directory (the lab)
	argEngine                // kernel or sim
	argShell                 // bash, zsh or fish
)

func (k argKind) String() string {
	return [...]string{"none", "any", "file", "dir", "engine", "shell"}[k]
}

type flagSpec struct {
	name  string
	usage string
	value argKind
}

type cmdSpec struct {
	name    string
	summary string
	flags   []flagSpec
	args    argKind // what positional arguments complete to
	// subs are the subcommands the first argument completes to (state).
	subs []string
}

// completionSpec reads every command's flags and positional arguments
// from its -h (commandHelps).
func (c *cli) completionSpec() []cmdSpec {
	var out []cmdSpec
	for _, h := range c.commandHelps() {
		s := cmdSpec{name: h.name, summary: h.summary, args: argNone}
		switch {
		case h.name == "completion":
			s.args = argShell
		case strings.Contains(h.usage, "DIR"):
			s.args = argDir
		case strings.Contains(h.usage, "FILE") || strings.Contains(h.usage, ".json"):
			s.args = argFile
		}
		for _, f := range h.flags {
			s.flags = append(s.flags, flagSpec{name: f.name, usage: f.usage, value: valueKind(f.name, f.value)})
		}
		if h.name == "state" {
			for _, sub := range stateCommands {
				s.subs = append(s.subs, sub.name)
			}
		}
		out = append(out, s)
	}
	return out
}

// valueKind guesses what a flag's value is from its name and the type
// word PrintDefaults shows ("" for a boolean flag). A type word in
// capitals names the value: FILE and DIR are paths, any other (NAME,
// PCT, SIZE) is a value with nothing to offer, not a file.
func valueKind(name, typ string) argKind {
	switch {
	case typ == "":
		return argNone
	case name == "engine":
		return argEngine
	case name == "lab", typ == "DIR":
		return argDir
	case typ == "FILE":
		return argFile
	case typ == "int" || typ == "uint" || typ == "float" || typ == "duration",
		typ == strings.ToUpper(typ),
		name == "var", name == "scenario":
		return argAny
	}
	return argFile
}

func writeBashCompletion(w io.Writer, cmds []cmdSpec) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, `# bash completion for tsolab: source <(tsolab completion bash)
_tsolab() {
    local cur prev cmd flags valued files dirs pos subs
    cur="${COMP_WORDS[COMP_CWORD]}"
    prev="${COMP_WORDS[COMP_CWORD-1]}"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=( $(compgen -W %q -- "$cur") )
        return
    fi
    cmd="${COMP_WORDS[1]}"
    case "$cmd" in
`, strings.Join(names, " "))
	for _, c := range cmds {
		var flags, files, dirs, anys []string
		for _, f := range c.flags {
			flags = append(flags, "-"+f.name)
			switch f.value {
			case argFile:
				files = append(files, "-"+f.name)
			case argDir:
				dirs = append(dirs, "-"+f.name)
			case argAny, argEngine:
				anys = append(anys, "-"+f.name)
			}
		}
		fmt.Fprintf(w, "        %s) flags=%q; files=%q; dirs=%q; valued=%q; pos=%s; subs=%q ;;\n",
			c.name, strings.Join(flags, " "), " "+strings.Join(files, " ")+" ", " "+strings.Join(dirs, " ")+" ", " "+strings.Join(anys, " ")+" ", c.args, strings.Join(c.subs, " "))
	}
	fmt.Fprint(w, `        *) return ;;
    esac
    if [[ "$prev" == -engine ]]; then
        COMPREPLY=( $(compgen -W "kernel sim kernel,sim" -- "$cur") )
        return
    fi
    if [[ "$files" == *" $prev "* ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=( $(compgen -f -- "$cur") )
        return
    fi
    if [[ "$dirs" == *" $prev "* ]]; then
        compopt -o filenames 2>/dev/null
        COMPREPLY=( $(compgen -d -- "$cur") )
        return
    fi
    if [[ "$valued" == *" $prev "* ]]; then
        COMPREPLY=()
        return
    fi
    if [[ "$cur" == -* ]]; then
        COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
        return
    fi
    if [[ -n "$subs" && $COMP_CWORD -eq 2 ]]; then
        COMPREPLY=( $(compgen -W "$subs" -- "$cur") )
        return
    fi
    case "$pos" in
        dir) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -d -- "$cur") ) ;;
        file) compopt -o filenames 2>/dev/null; COMPREPLY=( $(compgen -f -- "$cur") ) ;;
        shell) COMPREPLY=( $(compgen -W "bash zsh fish" -- "$cur") ) ;;
        *) COMPREPLY=() ;;
    esac
}
complete -F _tsolab tsolab
`)
}

// zshQuote escapes text for an _arguments or _describe spec inside single
// quotes.
func zshQuote(s string) string {
	r := strings.NewReplacer(`'`, `'\''`, `[`, `\[`, `]`, `\]`, `:`, `\:`)
	return r.Replace(s)
}

func writeZshCompletion(w io.Writer, cmds []cmdSpec) {
	fmt.Fprint(w, `#compdef tsolab
# zsh completion for tsolab: tsolab completion zsh > "${fpath[1]}/_tsolab"
_tsolab() {
    local curcontext="$curcontext" state line
    local -a commands
    commands=(
`)
	for _, c := range cmds {
		fmt.Fprintf(w, "        '%s:%s'\n", c.name, zshQuote(c.summary))
	}
	fmt.Fprint(w, `    )
    _arguments -C '1: :->command' '*:: :->args'
    case $state in
    command)
        _describe -t commands 'tsolab command' commands
        ;;
    args)
        case $line[1] in
`)
	for _, c := range cmds {
		fmt.Fprintf(w, "        %s)\n            _arguments", c.name)
		for _, f := range c.flags {
			spec := "-" + f.name + "[" + zshQuote(f.usage) + "]"
			switch f.value {
			case argFile:
				spec += ":file:_files"
			case argDir:
				spec += ":directory:_files -/"
			case argEngine:
				spec += ":engine:(kernel sim kernel,sim)"
			case argAny:
				spec += ":value: "
			}
			fmt.Fprintf(w, " \\\n                '%s'", spec)
		}
		if len(c.subs) > 0 {
			fmt.Fprintf(w, " \\\n                '1:subcommand:(%s)'", strings.Join(c.subs, " "))
		}
		switch c.args {
		case argDir:
			fmt.Fprint(w, " \\\n                '*:lab directory:_files -/'")
		case argFile:
			fmt.Fprint(w, " \\\n                '*:file:_files'")
		case argShell:
			fmt.Fprint(w, " \\\n                '1:shell:(bash zsh fish)'")
		}
		fmt.Fprint(w, "\n            ;;\n")
	}
	fmt.Fprint(w, `        esac
        ;;
    esac
}
if [[ "${funcstack[1]}" == _tsolab ]]; then
    _tsolab "$@"
else
    compdef _tsolab tsolab
fi
`)
}

// fishQuote quotes s for fish inside single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

func writeFishCompletion(w io.Writer, cmds []cmdSpec) {
	fmt.Fprint(w, "# fish completion for tsolab: tsolab completion fish > ~/.config/fish/completions/tsolab.fish\ncomplete -c tsolab -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c tsolab -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range cmds {
		cond := fishQuote("__fish_seen_subcommand_from " + c.name)
		for _, f := range c.flags {
			opt := ""
			switch f.value {
			case argFile:
				opt = " -r -F"
			case argDir:
				opt = " -x -a '(__fish_complete_directories)'"
			case argEngine:
				opt = " -x -a 'kernel sim kernel,sim'"
			case argAny:
				opt = " -x"
			}
			fmt.Fprintf(w, "complete -c tsolab -n %s -o %s%s -d %s\n", cond, f.name, opt, fishQuote(f.usage))
		}
		if len(c.subs) > 0 {
			subs := strings.Join(c.subs, " ")
			fmt.Fprintf(w, "complete -c tsolab -n %s -a %s\n",
				fishQuote("__fish_seen_subcommand_from "+c.name+"; and not __fish_seen_subcommand_from "+subs), fishQuote(subs))
		}
		switch c.args {
		case argDir:
			fmt.Fprintf(w, "complete -c tsolab -n %s -a '(__fish_complete_directories)'\n", cond)
		case argFile:
			fmt.Fprintf(w, "complete -c tsolab -n %s -F\n", cond)
		case argShell:
			fmt.Fprintf(w, "complete -c tsolab -n %s -a 'bash zsh fish'\n", cond)
		}
	}
}
