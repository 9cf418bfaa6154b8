package lab

import (
	"reflect"
	"strings"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		in   string
		want Path
		// canon is String()'s output when it differs from in.
		canon string
	}{
		{in: "spec.replicas", want: Path{Key("spec"), Key("replicas")}},
		{in: "a.b[0].c[*][\"key.with/dots\"]", want: Path{Key("a"), Key("b"), Index(0), Key("c"), Wildcard(), Key("key.with/dots")}},
		{in: `a.b["k"]`, want: Path{Key("a"), Key("b"), Key("k")}, canon: "a.b.k"},
		{in: `metadata.labels['app.kubernetes.io/name']`, want: Path{Key("metadata"), Key("labels"), Key("app.kubernetes.io/name")}, canon: `metadata.labels["app.kubernetes.io/name"]`},
		{in: "[0].name", want: Path{Index(0), Key("name")}},
		{in: "[*]", want: Path{Wildcard()}},
		{in: `x["quote\"d"]`, want: Path{Key("x"), Key(`quote"d`)}},
		{in: `x[""]`, want: Path{Key("x"), Key("")}},
		{in: "repo_commit", want: Path{Key("repo_commit")}},
		{in: "données.名前", want: Path{Key("données"), Key("名前")}},
		{in: "items[12].spec", want: Path{Key("items"), Index(12), Key("spec")}},
		{in: `status.conditions[?(@.type=="Ready")].status`, want: Path{Key("status"), Key("conditions"), Filter("type", "Ready"), Key("status")}},
		{in: `c[?(@.name=="a \"b\"]")]`, want: Path{Key("c"), Filter("name", `a "b"]`)}},
	}
	for _, tt := range tests {
		got, err := ParsePath(tt.in)
		if err != nil {
			t.Errorf("ParsePath(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParsePath(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
		canon := tt.canon
		if canon == "" {
			canon = tt.in
		}
		if s := got.String(); s != canon {
			t.Errorf("ParsePath(%q).String() = %q, want %q", tt.in, s, canon)
		}
		again, err := ParsePath(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("String() does not round-trip for %q: %q -> %#v, %v", tt.in, got.String(), again, err)
		}
	}
}

func TestParsePathErrors(t *testing.T) {
	tests := map[string]string{
		"":                        "empty field path",
		".a":                      `field path ".a" at offset 0: expected a key or [`,
		"a.":                      `field path "a." at offset 2: expected a key after the dot`,
		"a..b":                    `field path "a..b" at offset 2: expected a key after the dot`,
		"a[":                      `field path "a[" at offset 1: unterminated [`,
		"a[0":                     `field path "a[0" at offset 1: expected ] after the index`,
		"a[-1]":                   `field path "a[-1]" at offset 1: expected an index, * or a quoted key after [`,
		"a[x]":                    `field path "a[x]" at offset 1: expected an index, * or a quoted key after [`,
		`a["x]`:                   `field path "a[\"x]" at offset 1: unterminated quoted key`,
		`a["x"`:                   `field path "a[\"x\"" at offset 1: expected ] after the quoted key`,
		"a[*":                     `field path "a[*" at offset 1: expected ] after [*`,
		"a[0]b":                   `field path "a[0]b" at offset 4: unexpected "b"`,
		"a b":                     `field path "a b" at offset 1: unexpected " "`,
		"a[99999999999999999999]": `index 99999999999999999999 is too large`,
		"a[?(@.type==Ready)]":     `expected a filter of a key and a quoted string`,
		`a[?(@.type=="Ready"]`:    `expected )] after the filter's string`,
		`a[?(@.type=="Ready)]`:    `unterminated quoted string in the filter`,
		`a[?(@.=="x")]`:           `expected a filter of a key`,
		`a[?(.type=="x")]`:        `expected a filter of a key`,
	}
	for in, want := range tests {
		_, err := ParsePath(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParsePath(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}
