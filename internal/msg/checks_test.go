package msg

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// declaredKeys are the constants of type Key declared in this package's
// sources, so a key added without its texts is caught.
func declaredKeys(t *testing.T) map[Key]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	keys := map[Key]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "Key" {
					continue
				}
				for i, n := range vs.Names {
					lit := vs.Values[i].(*ast.BasicLit)
					v, _ := strconv.Unquote(lit.Value)
					if prev, dup := keys[Key(v)]; dup {
						t.Errorf("%s and %s share the key %q", prev, n.Name, v)
					}
					keys[Key(v)] = n.Name
				}
			}
		}
	}
	if len(keys) < 50 {
		t.Fatalf("found only %d keys in the sources; the parser missed them", len(keys))
	}
	return keys
}

// argVerbs maps each argument a format uses (1-based, explicit indexes
// %[n]v followed) to its verb, so a translation may reorder arguments but
// must take the same ones the same way.
func argVerbs(format string) map[int]string {
	out := map[int]string{}
	arg := 1
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			continue
		}
		for i < len(format) && strings.IndexByte("+-# 0123456789.", format[i]) >= 0 {
			i++
		}
		if i < len(format) && format[i] == '[' {
			end := strings.IndexByte(format[i:], ']')
			n, _ := strconv.Atoi(format[i+1 : i+end])
			arg = n
			i += end + 1
		}
		if i < len(format) {
			v := string(format[i])
			if prev, ok := out[arg]; ok && prev != v {
				v = prev + "/" + v
			}
			out[arg] = v
			arg++
		}
	}
	return out
}

func TestArgVerbs(t *testing.T) {
	got := argVerbs("%[3]s は %[1]d、%q%%、%[3]s %[2]q")
	want := map[int]string{1: "d", 2: "q", 3: "s"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("argVerbs = %v, want %v", got, want)
	}
	got = argVerbs("%[2]s は %[1]d、%q")
	want = map[int]string{1: "d", 2: "s/q"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("argVerbs = %v, want %v", got, want)
	}
}

// TestKeyedCatalogComplete holds every key to a text in English and in
// Japanese, taking the same arguments with the same verbs.
func TestKeyedCatalogComplete(t *testing.T) {
	keys := declaredKeys(t)
	for lang, table := range keyed {
		for k := range table {
			if _, ok := keys[k]; !ok {
				t.Errorf("%s: text for %q, which no constant declares", lang, k)
			}
		}
	}
	for k, name := range keys {
		en, okEn := englishKeyed[k]
		ja, okJa := japaneseKeyed[k]
		if !okEn || !okJa {
			t.Errorf("%s: en present %v, ja present %v; both are needed", name, okEn, okJa)
			continue
		}
		if ev, jv := argVerbs(en), argVerbs(ja); !reflect.DeepEqual(ev, jv) {
			t.Errorf("%s: arguments differ: en %q %v, ja %q %v", name, en, ev, ja, jv)
		}
	}
}

// codeWords are names that stay as they are in a Japanese sentence: file
// formats, git's own words and the lab file's field names.
var codeWords = map[string]bool{
	"JSON": true, "YAML": true, "HEAD": true, "git": true, "fsck": true, "FIFO": true, "MiB": true,
	"gitdir": true, "null": true, "subsetOf": true, "config": true,
	"Docker": true, "docker": true, "Debian": true, "Linux": true, "cgroup": true, "kubelet": true,
	"inotify": true, "kind": true, "GiB": true, "root": true, "API": true, "Pod": true,
}

var latinWord = regexp.MustCompile(`[A-Za-z]+`)

// TestJapaneseKeyedHasNoEnglish: outside format verbs and code names, a
// Japanese text has no Latin words.
func TestJapaneseKeyedHasNoEnglish(t *testing.T) {
	verbs := regexp.MustCompile(`%(\[\d+\])?[-+# 0-9.]*[a-zA-Z%]`)
	for k, ja := range japaneseKeyed {
		rest := verbs.ReplaceAllString(ja, "")
		for _, w := range latinWord.FindAllString(rest, -1) {
			if !codeWords[w] {
				t.Errorf("%s: English word %q in %q", k, w, ja)
			}
		}
	}
}

func TestRender(t *testing.T) {
	ja, en := New(Japanese), New(English)
	text := T(AssertEquals, "spec.replicas", "3", T(WhereIn, "/root/d.yaml"), "2")
	if got, want := en.Render(text), "expected spec.replicas = 3 in /root/d.yaml, found 2"; got != want {
		t.Errorf("en: %q, want %q", got, want)
	}
	if got, want := ja.Render(text), "/root/d.yaml の spec.replicas は 3 のはずですが、2 でした"; got != want {
		t.Errorf("ja: %q, want %q", got, want)
	}
	if got, want := text.String(), en.Render(text); got != want {
		t.Errorf("String() = %q, want the English %q", got, want)
	}
	script := T(FileExpectScript, "60%", "/root/n.md", Script("Hangul"), "10%", 1, 10)
	if got := ja.Render(script); !strings.Contains(got, "ハングル") {
		t.Errorf("ja script name not translated: %q", got)
	}
	if got := ja.Render(T(FileExpectScript, "60%", "/n", Script("Runic"), "0%", 0, 1)); !strings.Contains(got, "Runic") {
		t.Errorf("an unknown script must show as written: %q", got)
	}
	list := T(GitNotClean, "/r", 2, []Text{T(TypeString), T(TypeArray)})
	if got := ja.Render(list); !strings.Contains(got, "文字列、配列") {
		t.Errorf("a []Text argument is joined in the language: %q", got)
	}
	if got := ja.Render(T("expected %d", 1)); got != "expected 1" {
		t.Errorf("unknown key: %q", got)
	}
}
