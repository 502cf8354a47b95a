package e2e

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRelease is the release as a user gets it: make dist builds dist/ (and
// a second make does nothing), the README's Install commands install it
// (the .deb with dpkg: for real as root, else into a scratch root with a
// copy of the machine's package database; the tarball and the static
// analyze into a scratch /usr/local; the wheel into a fresh venv), and the
// README's quick start runs against the installed files only.
func TestRelease(t *testing.T) {
	releaseTools(t)
	rel := makeDist(t)
	ins := installFromReadme(t, rel)
	glibc := checkInstalledFiles(t, rel, ins)
	checkReadmeGlibc(t, glibc)
	runQuickstart(t, ins)
	checkCompletion(t, ins)
	checkStaticAnalyze(t, filepath.Join(ins.local, "bin", "analyze"))
}

// releaseTools skips the test where make dist cannot run (fails it in CI,
// which must run it).
func releaseTools(t *testing.T) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") != "" {
			t.Fatal(why)
		}
		t.Skip(why)
	}
	if fi, err := os.Stat(filepath.Join(root(), ".git")); err != nil || !fi.IsDir() {
		missing("make dist names a release by the revision Go stamps in vrlog, and Go stamps none outside a git clone (a git worktree's .git is a file): run this test in a clone")
	}
	for _, tool := range []string{"dpkg", "dpkg-deb", "dpkg-shlibdeps", "objdump", "readelf", "man"} {
		if _, err := exec.LookPath(tool); err != nil {
			missing(fmt.Sprintf("no %s: make dist builds a .deb and its install test installs it (apt-get install dpkg-dev man-db binutils)", tool))
		}
	}
}

// release is what make dist made.
type release struct {
	dir, version                  string
	tar, deb, static, wheel, sums string // file names in dir
}

// makeDist runs make build dist, then again with nothing changed: the
// second run must compile, link and package nothing, and leave every file
// as it was.
func makeDist(t *testing.T) release {
	t.Helper()
	start := time.Now()
	runMake(t, nil, "build", "dist")
	t.Logf("make build dist: %s", time.Since(start).Round(time.Second))
	dir := filepath.Join(root(), "dist")
	before := mtimes(t, dir, filepath.Join(root(), "bin"))
	// -x: go prints each compile and link it runs (none, when nothing
	// changed); cargo prints "Compiling" for each crate it builds.
	goflags, err := exec.Command("go", "env", "GOFLAGS").Output()
	if err != nil {
		t.Fatal(err)
	}
	out := runMake(t, []string{"GOFLAGS=" + strings.TrimSpace(string(goflags)) + " -x"}, "build", "dist")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "Compiling ") || strings.Contains(l, "/compile ") || strings.Contains(l, "/link ") ||
			strings.HasPrefix(l, "scripts/dist.sh ") && !strings.HasPrefix(l, "scripts/dist.sh stage") {
			t.Errorf("a second make build dist with nothing changed ran %q", l)
		}
	}
	if !strings.Contains(out, "Nothing to be done for 'dist-files'") {
		t.Errorf("a second make dist remade release files:\n%s", out)
	}
	after := mtimes(t, dir, filepath.Join(root(), "bin"))
	for f, m := range before {
		// bin/ and dist/.build/new/: go build refreshes an up-to-date
		// output's mtime on purpose (-x above showed that nothing was built).
		if after[f] != m && !strings.HasPrefix(f, filepath.Join(root(), "bin")+"/") && !strings.HasPrefix(f, filepath.Join(dir, ".build", "new")+"/") {
			t.Errorf("a second make dist rewrote %s", f)
		}
	}

	sums, _ := filepath.Glob(filepath.Join(dir, "vrlog_*_SHA256SUMS"))
	if len(sums) != 1 {
		t.Fatalf("dist/ has %d SHA256SUMS files, want 1: %q", len(sums), sums)
	}
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(sums[0]), "vrlog_"), "_SHA256SUMS")
	rel := release{dir: dir, version: v,
		tar: "vrlog_" + v + "_linux_amd64.tar.gz", deb: "vrlog_" + v + "_amd64.deb",
		static: "analyze_" + v + "_linux_amd64", wheel: "vrlog-" + v + "-py3-none-any.whl", sums: filepath.Base(sums[0])}
	var got []string
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if !e.IsDir() {
			got = append(got, e.Name())
		}
	}
	want := []string{rel.tar, rel.deb, rel.static, rel.wheel, rel.sums}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("dist/ holds %q, want %q", got, want)
	}
	t.Logf("dist/: %q", got)
	return rel
}

// runMake runs make in the checkout (not as a sub-make of the make that
// runs the tests: the jobserver is not ours) and returns its output.
func runMake(t *testing.T, env []string, targets ...string) string {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", root(), "--no-print-directory"}, targets...)...)
	for _, e := range os.Environ() {
		if k, _, _ := strings.Cut(e, "="); k != "MAKEFLAGS" && k != "MAKELEVEL" && k != "MFLAGS" {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, append(env, "LC_ALL=C")...) // make's messages untranslated
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(targets, " "), err, out)
	}
	return string(out)
}

// mtimes maps every regular file under dirs to its size and mtime.
func mtimes(t *testing.T, dirs ...string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err != nil {
				t.Fatal(err)
			}
			if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
				m[p] = fmt.Sprintf("%d %s", fi.Size(), fi.ModTime())
			}
			return nil
		})
	}
	return m
}

// installed is where the README's Install commands put the release.
type installed struct {
	root  string // the .deb's root: / (installed for real) or a scratch root
	local string // the scratch /usr/local: the tarball and the static analyze
	venv  string // the wheel
	real  bool
}

// installFromReadme runs the README's Install block in dist/, as root
// without sudo, with /usr/local moved to a scratch directory, pip from a
// fresh venv and, where the .deb cannot be installed for real (not root, or
// a vrlog package already there), dpkg pointed at a scratch root and a copy
// of the machine's package database: its dependencies are checked against
// what the machine has either way.
func installFromReadme(t *testing.T, rel release) installed {
	t.Helper()
	tmp := t.TempDir()
	ins := installed{root: filepath.Join(tmp, "root"), local: filepath.Join(tmp, "local"), venv: filepath.Join(tmp, "venv")}
	for _, d := range []string{ins.root, filepath.Join(ins.local, "bin")} {
		os.MkdirAll(d, 0o755)
	}
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(python, "-m", "venv", ins.venv).CombinedOutput(); err != nil {
		t.Fatalf("python3 -m venv: %v\n%s", err, out)
	}
	status, _ := exec.Command("dpkg-query", "-W", "-f=${Status}", "vrlog").Output()
	_, binErr := os.Stat("/usr/bin/vrlog")
	ins.real = os.Geteuid() == 0 && !strings.Contains(string(status), "installed") && os.IsNotExist(binErr)
	dpkg := "dpkg"
	if ins.real {
		ins.root = "/"
		// Before dpkg -i, so that a half-done install goes too.
		t.Cleanup(func() { purge(t) })
	} else {
		admin := filepath.Join(tmp, "dpkg")
		if out, err := exec.Command("cp", "-a", "/var/lib/dpkg", admin).CombinedOutput(); err != nil {
			t.Fatalf("copying the package database: %v\n%s", err, out)
		}
		dpkg = fmt.Sprintf("dpkg --force-not-root --no-triggers --admindir=%s --instdir=%s --log=%s", admin, ins.root, filepath.Join(tmp, "dpkg.log"))
		t.Logf("installing the .deb into the scratch root %s (root: %v; vrlog package: %q; /usr/bin/vrlog: %v)", ins.root, os.Geteuid() == 0, status, binErr)
	}
	env := append(networkEnv(), "PATH="+filepath.Join(ins.venv, "bin")+":/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME="+tmp)
	lines := strings.Split(strings.TrimSpace(readmeBlock(t, "sh install")), "\n")
	if len(lines) != 5 {
		t.Fatalf("the README's Install block has %d commands, want 5 (sums, dpkg, tar, pip, install): %q", len(lines), lines)
	}
	for _, l := range lines {
		for _, w := range strings.Fields(l) {
			if !strings.Contains(w, "*") {
				continue
			}
			if m, _ := filepath.Glob(filepath.Join(rel.dir, w)); len(m) != 1 {
				t.Errorf("README Install: %s matches %d files of dist/, want 1", w, len(m))
			}
		}
		cmd := strings.ReplaceAll(strings.TrimPrefix(l, "sudo "), "/usr/local", ins.local)
		cmd = strings.Replace(cmd, "dpkg -i ", dpkg+" -i ", 1)
		r := runIn(t, rel.dir, "bash", []string{"-c", cmd}, env)
		if r.code != 0 {
			t.Fatalf("README Install: %s: %s", cmd, r)
		}
		t.Logf("ran: %s", cmd)
	}
	return ins
}

// networkEnv is the environment's settings for reaching PyPI (pip's own,
// proxies, certificates): pip install needs them, and they are the
// machine's, not the build's.
func networkEnv() []string {
	var env []string
	for _, e := range os.Environ() {
		k, _, _ := strings.Cut(e, "=")
		if strings.HasPrefix(k, "PIP_") || strings.HasPrefix(k, "SSL_CERT_") || strings.HasSuffix(strings.ToLower(k), "_proxy") {
			env = append(env, e)
		}
	}
	return env
}

// purge removes the vrlog package installed for real, and checks that
// nothing of it is left.
func purge(t *testing.T) {
	if out, err := exec.Command("dpkg", "--purge", "vrlog").CombinedOutput(); err != nil {
		t.Errorf("dpkg --purge vrlog: %v\n%s", err, out)
	}
	for _, f := range []string{"/usr/bin/vrlog", "/usr/share/man/man1/vrlog.1.gz", "/usr/share/bash-completion/completions/vrlog"} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("dpkg --purge vrlog left %s", f)
		}
	}
}

// runIn runs name with args in dir with the environment env only.
func runIn(t *testing.T, dir, name string, args, env []string) result {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir, cmd.Env = dir, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatal(err)
	}
	return result{exitCode(err), out.String(), errb.String()}
}

// readmeBlock returns the one README block fenced with "```"+info.
func readmeBlock(t *testing.T, info string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root(), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(string(b), "\n```"+info+"\n")
	if len(parts) != 2 {
		t.Fatalf("README.md has %d blocks fenced ```%s, want 1", len(parts)-1, info)
	}
	body, _, ok := strings.Cut(parts[1], "\n```\n")
	if !ok {
		t.Fatalf("README.md: the ```%s block does not end", info)
	}
	return body + "\n"
}

// checkInstalledFiles checks that the .deb and the tarball installed the
// same vrlog, man page and completions, that the .deb declares the glibc
// the binary needs, and returns that glibc.
func checkInstalledFiles(t *testing.T, rel release, ins installed) string {
	t.Helper()
	usr := filepath.Join(ins.root, "usr")
	for _, f := range [][2]string{
		{"bin/vrlog", "bin/vrlog"},
		{"share/man/man1/vrlog.1.gz", "share/man/man1/vrlog.1.gz"},
		{"share/bash-completion/completions/vrlog", "share/bash-completion/completions/vrlog"},
		{"share/zsh/vendor-completions/_vrlog", "share/zsh/site-functions/_vrlog"},
		{"share/fish/vendor_completions.d/vrlog.fish", "share/fish/vendor_completions.d/vrlog.fish"},
	} {
		deb, err1 := os.ReadFile(filepath.Join(usr, f[0]))
		tar, err2 := os.ReadFile(filepath.Join(ins.local, f[1]))
		if err1 != nil || err2 != nil || !bytes.Equal(deb, tar) || len(deb) == 0 {
			t.Errorf("the .deb's /usr/%s and the tarball's %s differ or are missing: %v, %v", f[0], f[1], err1, err2)
		}
	}
	vrlog := filepath.Join(usr, "bin", "vrlog")
	checkVersion(t, vrlog, rel.version)
	glibc := newestGlibc(t, vrlog)
	depends, err := exec.Command("dpkg-deb", "-f", filepath.Join(rel.dir, rel.deb), "Depends").Output()
	if err != nil || !strings.Contains(string(depends), "libc6 (>= "+glibc+")") {
		t.Errorf("the .deb's Depends %q (%v) does not ask for the glibc vrlog needs, libc6 (>= %s)", depends, err, glibc)
	}
	install, _ := os.ReadFile(filepath.Join(ins.local, "share", "doc", "vrlog", "INSTALL"))
	if !strings.Contains(string(install), "glibc "+glibc+" or newer") {
		t.Errorf("the tarball's INSTALL does not say glibc %s or newer:\n%s", glibc, install)
	}
	return glibc
}

// checkVersion checks that the file names' version is what vrlog
// --version reports: 1.2.3 for v1.2.3, 0+devel.REV[.dirty] for devel REV[-dirty].
func checkVersion(t *testing.T, vrlog, v string) {
	t.Helper()
	out, err := exec.Command(vrlog, "--version").Output()
	if err != nil {
		t.Fatalf("%s --version: %v", vrlog, err)
	}
	want := "vrlog version v" + v + ", "
	if rev, ok := strings.CutPrefix(v, "0+devel."); ok {
		want = "vrlog version devel " + strings.Replace(rev, ".dirty", "-dirty", 1) + " ("
	}
	if !strings.HasPrefix(string(out), want) {
		t.Errorf("the release is named %s, but vrlog --version says %q (want it to begin %q)", v, out, want)
	}
}

// newestGlibc is the newest GLIBC symbol version the binary imports.
func newestGlibc(t *testing.T, bin string) string {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var newest string
	var best []int
	for _, s := range syms {
		v, ok := strings.CutPrefix(s.Version, "GLIBC_")
		if !ok {
			continue
		}
		var n []int
		for _, p := range strings.Split(v, ".") {
			i, _ := strconv.Atoi(p)
			n = append(n, i)
		}
		if slices.Compare(n, best) > 0 {
			newest, best = v, n
		}
	}
	if newest == "" {
		t.Fatalf("%s imports no GLIBC symbol", bin)
	}
	return newest
}

// checkReadmeGlibc checks that the README's Install section states the
// glibc the binary needs.
func checkReadmeGlibc(t *testing.T, glibc string) {
	t.Helper()
	b, _ := os.ReadFile(filepath.Join(root(), "README.md"))
	install, _, _ := strings.Cut(string(b), "\n## Build from source")
	stated := regexp.MustCompile(`glibc (\d+\.\d+)`).FindAllStringSubmatch(install, -1)
	if len(stated) == 0 {
		t.Error("the README's Install section states no glibc")
	}
	for _, s := range stated {
		if s[1] != glibc {
			t.Errorf("the README's Install section says glibc %s; vrlog needs %s (its newest GLIBC symbol version)", s[1], glibc)
		}
	}
}

// runQuickstart runs the README's quick start as one bash script (set -e)
// in an empty directory, with nothing of the checkout or the build: PATH
// has the venv, the installed .deb and the system's directories. Its
// transports are its own, as in TestReadmeCommands: the README's port
// replaced by a free one, iceoryx2 under a prefix of this test's.
func runQuickstart(t *testing.T, ins installed) {
	t.Helper()
	dir := t.TempDir()
	prefix := fmt.Sprintf("vrlogreadme%d_release_", os.Getpid())
	t.Cleanup(func() { removeIceoryxPrefix(prefix) })
	os.Mkdir(filepath.Join(dir, "config"), 0o755)
	os.WriteFile(filepath.Join(dir, "config", "iceoryx2.toml"), []byte(fmt.Sprintf("[global]\nprefix = %q\n", prefix)), 0o644)
	script := strings.ReplaceAll(readmeBlock(t, "sh quickstart"), "tcp/127.0.0.1:7447", fmt.Sprintf("tcp/127.0.0.1:%d", freePort(t)))
	os.WriteFile(filepath.Join(dir, "quickstart.sh"), []byte(script), 0o644)
	path := filepath.Join(ins.venv, "bin") + ":/usr/local/bin:/usr/bin:/bin"
	env := []string{"HOME=" + dir}
	if !ins.real {
		path = filepath.Join(ins.venv, "bin") + ":" + filepath.Join(ins.root, "usr", "bin") + ":/usr/local/bin:/usr/bin:/bin"
		env = append(env, "MANPATH="+filepath.Join(ins.root, "usr", "share", "man"))
	}
	env = append(env, "PATH="+path)
	if r := runIn(t, dir, "bash", []string{"-c", "command -v vrlog python"}, env); r.stdout != filepath.Join(ins.root, "usr", "bin", "vrlog")+"\n"+filepath.Join(ins.venv, "bin", "python")+"\n" {
		t.Fatalf("the quick start would not run the installed vrlog and python: %s", r)
	}

	// The simulator runs in the background past the script's end: the
	// script's output goes to a file (a pipe would wait for it), and its
	// process group ends with the test.
	outf, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", "-e", "quickstart.sh")
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, outf, outf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { endGroup(cmd.Process.Pid) })
	err = cmd.Wait()
	out, _ := os.ReadFile(outf.Name())
	outf.Close()
	if err != nil {
		t.Fatalf("README quick start against the installed release: %v\n%s", err, out)
	}
	for _, w := range []string{
		"vrlog version ",                        // vrlog --version
		"record: wrote first.vrlog",             // vrlog record
		"vr/r1/camera/front vs vr/r1/state",     // vrlog analyze: the frames' lag behind the states
		"vrlog(1)",                              // man vrlog
		"'vr/r1/state'", "'vr/r1/camera/front'", // Python: the channels
		"State(", // and the first state, decoded
	} {
		if !bytes.Contains(out, []byte(w)) {
			t.Errorf("README quick start: the output lacks %q:\n%s", w, out)
		}
	}
}

// endGroup interrupts what is left of the process group pgid (the
// simulator, until its --duration ends), waits up to 10 s, then kills it.
func endGroup(pgid int) {
	syscall.Kill(-pgid, syscall.SIGINT)
	for i := 0; i < 100 && syscall.Kill(-pgid, 0) == nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

// checkCompletion sources the installed bash completion, as bash-completion
// does, and completes a verb and a flag through the installed binary; zsh
// and fish check their scripts' syntax where they are installed.
func checkCompletion(t *testing.T, ins installed) {
	t.Helper()
	share := filepath.Join(ins.root, "usr", "share")
	env := []string{"PATH=" + filepath.Join(ins.root, "usr", "bin") + ":/usr/bin:/bin"}
	for words, want := range map[string]string{"vrlog rec": "record", "vrlog analyze --max-sk": "--max-skips"} {
		script := fmt.Sprintf(`source %s/bash-completion/completions/vrlog; COMP_WORDS=(%s); COMP_CWORD=%d; _vrlog; printf '%%s\n' "${COMPREPLY[@]}"`,
			share, words, len(strings.Fields(words))-1)
		if r := runIn(t, t.TempDir(), "bash", []string{"-c", script}, env); r.code != 0 || !slices.Contains(strings.Fields(r.stdout), want) {
			t.Errorf("bash completion of %q: want %q; %s", words, want, r)
		}
	}
	for _, c := range [][]string{{"zsh", "-n", share + "/zsh/vendor-completions/_vrlog"}, {"fish", "--no-execute", share + "/fish/vendor_completions.d/vrlog.fish"}} {
		if _, err := exec.LookPath(c[0]); err != nil {
			t.Logf("no %s here: its completion script's syntax is not checked", c[0])
			continue
		}
		if out, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(c, " "), err, out)
		}
	}
}

// checkStaticAnalyze runs the installed static analyze on the bundled
// sample in a directory holding nothing else: as root, chrooted into it
// (no /lib, no /etc, no /tmp), else there with an empty environment; its
// report must be the sample's golden one.
func checkStaticAnalyze(t *testing.T, analyze string) {
	t.Helper()
	f, err := elf.Open(analyze)
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := f.ImportedLibraries()
	interp := slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_INTERP })
	f.Close()
	if interp || len(libs) > 0 {
		t.Fatalf("%s is not static: interpreter %v, libraries %q", analyze, interp, libs)
	}
	dir := t.TempDir()
	for _, c := range [][2]string{{analyze, "analyze"}, {filepath.Join(root(), "testdata", "sample.vrlog"), "sample.vrlog"}} {
		b, err := os.ReadFile(c[0])
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, c[1]), b, 0o755)
	}
	cmd := exec.Command("./analyze", "sample.vrlog")
	cmd.Dir, cmd.Env = dir, []string{}
	if os.Geteuid() == 0 {
		cmd = exec.Command("/analyze", "sample.vrlog")
		cmd.Dir, cmd.Env = "/", []string{}
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: dir}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("static analyze alone in %s (chrooted: %v): %v\n%s", dir, cmd.SysProcAttr != nil, err, out)
	}
	want, _ := os.ReadFile(filepath.Join(root(), "testdata", "sample.expected.txt"))
	if want = bytes.Replace(want, []byte("../testdata/sample.vrlog"), []byte("sample.vrlog"), 1); !bytes.Equal(out, want) {
		t.Errorf("static analyze on the sample: the report is not the golden one (testdata/sample.expected.txt):\n%s", out)
	}
}
