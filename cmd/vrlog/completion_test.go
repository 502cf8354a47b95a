package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/vrlog/vrlog/internal/cliutil"
)

// vrlogBinary builds the binary without cgo (the transports are not needed
// to complete or to print the manual): the completion scripts run it.
func vrlogBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "vrlog")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func run(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	app := newApp()
	app.Writer, app.ErrWriter = &out, &errb
	if code := cliutil.Execute(app, append([]string{"vrlog"}, args...)); code != 0 {
		t.Fatalf("vrlog %v: exit %d: %s", args, code, errb.String())
	}
	return out.String()
}

// bash completes commands, then a command's flags, then file names, by
// asking the binary (tested by running the script's function in bash).
func TestBashCompletion(t *testing.T) {
	bin := vrlogBinary(t)
	script := filepath.Join(t.TempDir(), "vrlog.bash")
	os.WriteFile(script, []byte(run(t, "completion", "bash")), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "run.vrlog"), nil, 0o644)
	complete := func(words ...string) []string {
		t.Helper()
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + w + "'"
		}
		sh := "source " + script + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "; _vrlog; printf '%s\\n' \"${COMPREPLY[@]}\""
		cmd := exec.Command("bash", "-c", sh)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("vrlog", "ex"); strings.Join(got, " ") != "export" {
		t.Errorf("vrlog ex<TAB>: %v, want export", got)
	}
	if got := complete("vrlog", ""); len(got) < 12 || !contains(got, "analyze") || !contains(got, "completion") {
		t.Errorf("vrlog <TAB>: %v", got)
	}
	if got := complete("vrlog", "export", "--for"); strings.Join(got, " ") != "--format --force" {
		t.Errorf("vrlog export --for<TAB>: %v, want --format --force", got)
	}
	if got := complete("vrlog", "analyze", "--max-s"); strings.Join(got, " ") != "--max-skips" {
		t.Errorf("vrlog analyze --max-s<TAB>: %v", got)
	}
	// Nothing from vrlog for a file argument: bash falls back to file names
	// (complete -o default), which COMPREPLY does not show.
	if got := complete("vrlog", "info", "ru"); len(got) != 0 {
		t.Errorf("vrlog info ru<TAB>: %v, want nothing from vrlog", got)
	}
	if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
		t.Errorf("bash -n: %v\n%s", err, out)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// zsh and fish scripts: every command is offered (fish lists them
// statically; zsh asks the binary like bash, with descriptions).
func TestZshFishCompletion(t *testing.T) {
	zsh := run(t, "completion", "zsh")
	if !strings.HasPrefix(zsh, "#compdef vrlog") || !strings.Contains(zsh, "--generate-bash-completion") || !strings.Contains(zsh, "compdef _vrlog vrlog") {
		t.Errorf("zsh script:\n%s", zsh)
	}
	fish := run(t, "completion", "fish")
	for _, c := range commands() {
		if !strings.Contains(fish, "-n '__fish_vrlog_no_subcommand' -a '"+strings.Join(c.Names(), " ")+"'") {
			t.Errorf("fish script does not complete %s", c.Name)
		}
	}
	if !strings.Contains(fish, "-l format") {
		t.Error("fish script lacks export's --format")
	}
	for _, sh := range []struct{ name, script string }{{"zsh", zsh}, {"fish", fish}} {
		if p, err := exec.LookPath(sh.name); err == nil {
			f := filepath.Join(t.TempDir(), "script")
			os.WriteFile(f, []byte(sh.script), 0o644)
			if out, err := exec.Command(p, "-n", f).CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", sh.name, err, out)
			}
		}
	}
}

// The manual is generated from the command definitions: every command and
// flag is in it, as roff and as Markdown.
func TestManual(t *testing.T) {
	man, md := run(t, "man"), run(t, "man", "--markdown")
	if !strings.HasPrefix(man, ".nh\n.TH vrlog 1") {
		t.Errorf("man page starts %.40q", man)
	}
	for _, c := range commands() {
		if !strings.Contains(man, c.Name) || !strings.Contains(md, "## "+c.Name) {
			t.Errorf("manual lacks %s", c.Name)
		}
		for _, f := range c.Flags {
			if n := f.Names()[0]; !strings.Contains(md, "--"+n) {
				t.Errorf("manual lacks %s --%s", c.Name, n)
			}
		}
	}
}
