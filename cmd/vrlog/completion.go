package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/vrlog/vrlog/internal/cliutil"
)

// The shell scripts ask the binary itself what comes next: urfave/cli
// answers a command line ending in --generate-bash-completion with the
// subcommands, or the flags when the word being completed starts with "-".
// When it has nothing to offer (a file argument), the shell completes file
// names.
const bashCompletion = `# bash completion for vrlog: source <(vrlog completion bash)
_vrlog() {
	local cur=${COMP_WORDS[COMP_CWORD]} opts
	if [[ $cur == -* ]]; then
		opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" "$cur" --generate-bash-completion 2>/dev/null)
	else
		opts=$("${COMP_WORDS[@]:0:COMP_CWORD}" --generate-bash-completion 2>/dev/null)
	fi
	COMPREPLY=($(compgen -W "$opts" -- "$cur"))
}
complete -o bashdefault -o default -F _vrlog vrlog
`

const zshCompletion = `#compdef vrlog
# zsh completion for vrlog: vrlog completion zsh > "${fpath[1]}/_vrlog"
_vrlog() {
	local -a opts
	local cur=${words[-1]}
	if [[ $cur == -* ]]; then
		opts=("${(@f)$(env 0=zsh ${words[@]:0:#words[@]-1} $cur --generate-bash-completion 2>/dev/null)}")
	else
		opts=("${(@f)$(env 0=zsh ${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
	fi
	if [[ -n ${opts[1]} ]]; then
		_describe 'values' opts
	else
		_files
	fi
}
compdef _vrlog vrlog
`

// docCommands are the commands that describe the binary: shell completion
// scripts and the manual, generated from the command definitions.
func docCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "completion",
			Usage:     "print a shell completion script: bash, zsh or fish",
			ArgsUsage: "bash|zsh|fish",
			Description: `Prints a script that completes vrlog's commands and flags (and file names
where a command takes files) in the shell.

EXAMPLES:
   source <(vrlog completion bash)                      # in ~/.bashrc
   vrlog completion zsh > "${fpath[1]}/_vrlog"          # then restart zsh
   vrlog completion fish > ~/.config/fish/completions/vrlog.fish

` + cliutil.ExitCodesHelp,
			Action: func(c *cli.Context) error {
				var script string
				switch c.Args().First() {
				case "bash":
					script = bashCompletion
				case "zsh":
					script = zshCompletion
				case "fish":
					s, err := c.App.ToFishCompletion()
					if err != nil {
						return cliutil.Runtime(err)
					}
					script = s
				default:
					return cliutil.Usage("completion: give the shell: bash, zsh or fish")
				}
				_, err := fmt.Fprint(c.App.Writer, script)
				return cliutil.Runtime(err)
			},
		},
		{
			Name:  "man",
			Usage: "print the manual page (roff; --markdown for Markdown), generated from the command definitions",
			Description: `Every command with its description and flags, as a man page or Markdown.

EXAMPLES:
   vrlog man | man -l -
   vrlog man --markdown > vrlog.md

` + cliutil.ExitCodesHelp,
			Flags: []cli.Flag{&cli.BoolFlag{Name: "markdown", Usage: "Markdown instead of roff"}},
			Action: func(c *cli.Context) error {
				if c.NArg() > 0 {
					return cliutil.Usage("man: takes no arguments")
				}
				gen := func() (string, error) { return c.App.ToManWithSection(1) }
				if c.Bool("markdown") {
					gen = c.App.ToMarkdown
				}
				s, err := gen()
				if err != nil {
					return cliutil.Runtime(err)
				}
				_, err = fmt.Fprint(c.App.Writer, s)
				return cliutil.Runtime(err)
			},
		},
	}
}
