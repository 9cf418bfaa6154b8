package msg

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// jaTerms gives each thing one word in labctl's Japanese and in the
// repository's Japanese labs: avoid is what a reader met as a second word for
// the same thing (or as translated English), use is the word kept.
var jaTerms = []struct {
	avoid *regexp.Regexp
	use   string
}{
	{regexp.MustCompile(`宣言`), "マニフェスト (the YAML files the repository holds)"},
	{regexp.MustCompile(`差[がをはのにもでと]`), "差分 (what kubectl diff shows)"},
	{regexp.MustCompile(`きれい`), "クリーン (git's own word for a clean work tree)"},
	{regexp.MustCompile(`[でが]管理(され|して|する)`), "追跡 (git's own word for a tracked file)"},
	{regexp.MustCompile(`ブール値`), "真偽値"},
	{regexp.MustCompile(`個数`), "レプリカ数 for replicas, 数 otherwise"},
	{regexp.MustCompile(`プローブ`), "テスト実行 (labctl running the learner's script; to a Kubernetes learner プローブ is a readiness probe)"},
	{regexp.MustCompile(`必要があります`), "a list of what holds at the end, or 〜してください / 〜します"},
	{regexp.MustCompile(`捕まえる`), "検知する"},
	{regexp.MustCompile(`核心`), "大事なのは…です"},
	{regexp.MustCompile(`昇格`), "what happens, said plainly"},
}

// TestJapaneseTermsAreConsistent reads the Japanese catalogue, the browser
// page's words and every Japanese lab of the repository (lab.yaml and its
// fixtures) for the words jaTerms replaces.
func TestJapaneseTermsAreConsistent(t *testing.T) {
	// The test runs in internal/msg; the module's root is two levels up.
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no module root at %s: %v", root, err)
	}
	var files []string
	msgs, err := filepath.Glob(filepath.Join(root, "internal", "msg", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range msgs {
		if !strings.HasSuffix(f, "_test.go") {
			files = append(files, f)
		}
	}
	files = append(files, filepath.Join(root, "web", "src", "i18n.js"), filepath.Join(root, "lab.yaml"))
	labs, err := filepath.Glob(filepath.Join(root, "labs", "*", "lab.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	japaneseLabs := 0
	for _, l := range labs {
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`(?m)^\s+language:\s*ja\s*$`).Match(b) {
			continue
		}
		japaneseLabs++
		err = filepath.WalkDir(filepath.Dir(l), func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasSuffix(p, ".go") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if japaneseLabs == 0 {
		t.Fatal("found no Japanese lab in labs/: the test reads nothing there")
	}
	for _, f := range files {
		for n, line := range readLines(t, f) {
			for _, term := range jaTerms {
				if w := term.avoid.FindString(line); w != "" {
					rel, _ := filepath.Rel(root, f)
					t.Errorf("%s:%d: %q: use %s", rel, n+1, w, term.use)
				}
			}
		}
	}
}

// TestJapaneseTermsCatchTheirWords keeps every rule of jaTerms live: each
// finds the wording it was written for.
func TestJapaneseTermsCatchTheirWords(t *testing.T) {
	for i, old := range []string{
		"宣言を入れるリポジトリ", "差があれば終了コード1", "作業ツリーはきれいです", "HEAD で管理されている",
		"ブール値の false", "個数が分かりません", "プローブの実行中", "空である必要があります",
		"ドリフトを捕まえる", "順序が核心です", "事故をコードに昇格させる",
	} {
		if !jaTerms[i].avoid.MatchString(old) {
			t.Errorf("rule %d (%s) does not catch %q", i, jaTerms[i].avoid, old)
		}
	}
	for _, fine := range []string{"差分があれば", "作業ツリーはクリーンです", "shop の管理者のままです", "レプリカ数"} {
		for _, term := range jaTerms {
			if term.avoid.MatchString(fine) {
				t.Errorf("%s catches %q, which keeps the terms", term.avoid, fine)
			}
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return lines
}
