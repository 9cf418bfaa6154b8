package importer

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A verify script that writes its output to a log outside the learner's
// home (testdata/killercoda/helm-get: `{ set -e; …; diff … } >>
// ${LOGFILE} 2>&1; echo done`, LOGFILE=/ks/step1-verify.log) would pass
// in the grader whatever the learner did: the redirection fails where
// there is no /ks, the block never runs, and echo done ends it with 0. The
// check writes that output to its standard error instead, so that the
// block runs and its failure fails the check; TODO.md says so.
func TestVerifyLogOutsideHomeStillJudges(t *testing.T) {
	script, err := os.ReadFile("testdata/killercoda/helm-get/step1-verify.sh")
	if err != nil {
		t.Fatal(err)
	}
	c := commandVerify(string(script))
	if c.Command == nil || c.Command.Run[0] != "bash" {
		t.Fatalf("check = %+v, want a bash command check", c)
	}
	// A helm whose release has other notes than /root/notes holds: the
	// learner did not do the step.
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "helm"), []byte("#!/bin/sh\necho 'notes of another release'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(c.Command.Run[0], c.Command.Run[1:]...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("the check passed though helm's notes differ from /root/notes:\n%s\nscript:\n%s", out, c.Command.Run[2])
	}
	if strings.Contains(c.Command.Run[2], ">> ${LOGFILE}") {
		t.Errorf("the script still writes to ${LOGFILE}:\n%s", c.Command.Run[2])
	}

	// A file the script reads back is no log: left as it is.
	kept, files := logsOutsideHome("#!/bin/bash\nkubectl get pods > /tmp/pods\ngrep -q web /tmp/pods\n")
	if len(files) != 0 || !strings.Contains(kept, "> /tmp/pods") {
		t.Errorf("a file read back was redirected: %q, %v", kept, files)
	}
	// A file in the home, and /dev/null, are left as they are.
	kept, files = logsOutsideHome("#!/bin/bash\nkubectl get pods > /root/pods 2>/dev/null\n")
	if len(files) != 0 || !strings.Contains(kept, "> /root/pods 2>/dev/null") {
		t.Errorf("a file in the home was redirected: %q, %v", kept, files)
	}
}

// The import of helm-get's step says where its verify script's output
// goes, not that it reads a file it only writes.
func TestVerifyLogOutsideHomeTodo(t *testing.T) {
	script, err := os.ReadFile("testdata/killercoda/helm-get/step1-verify.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, _, out := importTree(t, Killercoda, "helm-get", map[string]string{
		"index.json":      `{"title": "Helm get", "details": {"steps": [{"title": "Get notes", "text": "step1/text.md", "verify": "step1/verify.sh"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"step1/text.md":   "Write the notes of release webserver to /root/notes.\n",
		"step1/verify.sh": string(script),
	})
	todo := todoOf(t, out)
	if !strings.Contains(todo, "writes its output to /ks/step1-verify.log") {
		t.Errorf("TODO.md does not say where the output goes:\n%s", todo)
	}
	if strings.Contains(todo, "reads /ks/step1-verify.log") {
		t.Errorf("TODO.md says the script reads its log:\n%s", todo)
	}
}

// A script among the assets that a background script runs (helm-get's
// init.sh: helm repo add https://…) reaches the internet as the scripts of
// the pages do: TODO.md says so.
func TestInternetInAssetScripts(t *testing.T) {
	initSh, err := os.ReadFile("testdata/killercoda/helm-get/init.sh")
	if err != nil {
		t.Fatal(err)
	}
	_, _, out := importTree(t, Killercoda, "helm-get", map[string]string{
		"index.json": `{"title": "Helm get", "details": {"assets": {"host01": [{"file": "init.sh", "target": "/ks", "chmod": "+x"}]},
  "intro": {"text": "intro.md", "background": "init/background.sh"},
  "steps": [{"title": "Get notes", "text": "step1/text.md"}]}, "backend": {"imageid": "kubernetes-kubeadm-1node"}}`,
		"intro.md":           "Helm.\n",
		"init/background.sh": "FILE=/ks/init.sh; while ! test -f ${FILE}; do clear; sleep 0.1; done; bash ${FILE} > /ks/init.log\n",
		"assets/init.sh":     string(initSh),
		"step1/text.md":      "Run `helm get notes webserver`{{exec}}\n",
	})
	if todo := todoOf(t, out); !strings.Contains(todo, "the source reaches the internet (helm repo add)") {
		t.Errorf("TODO.md does not say the source reaches the internet:\n%s", todo)
	}
}
