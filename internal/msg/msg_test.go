package msg

import (
	"reflect"
	"regexp"
	"testing"
)

func TestChoose(t *testing.T) {
	tests := []struct {
		name string
		lab  string
		env  map[string]string
		want Lang
	}{
		{"ja lab, no locale", "ja", nil, Japanese},
		{"ja lab, C locale", "ja", map[string]string{"LANG": "C"}, Japanese},
		{"ja lab, C.UTF-8", "ja", map[string]string{"LANG": "C.UTF-8"}, Japanese},
		{"ja lab, POSIX", "ja", map[string]string{"LANG": "POSIX"}, Japanese},
		{"ja lab, Japanese locale", "ja", map[string]string{"LANG": "ja_JP.UTF-8"}, Japanese},
		{"ja lab, English locale", "ja", map[string]string{"LANG": "en_US.UTF-8"}, English},
		{"ja lab, German locale", "ja-JP", map[string]string{"LANG": "de_DE"}, English},
		{"ja lab, LC_ALL wins over LANG", "ja", map[string]string{"LANG": "ja_JP.UTF-8", "LC_ALL": "en_GB.UTF-8"}, English},
		{"ja lab, LC_MESSAGES wins over LANG", "ja", map[string]string{"LANG": "en_US.UTF-8", "LC_MESSAGES": "ja_JP.UTF-8"}, Japanese},
		{"ja lab, empty LC_ALL is skipped", "ja", map[string]string{"LC_ALL": "", "LANG": "en_US"}, English},
		{"en lab, no locale", "en", nil, English},
		{"en lab, Japanese locale", "en", map[string]string{"LANG": "ja_JP.UTF-8"}, Japanese},
		{"unset lab language, C", "", map[string]string{"LANG": "C"}, English},
		{"Korean lab, no locale", "ko", nil, English},
		{"LABCTL_LANG=ja over an English locale", "ja", map[string]string{"LANG": "en_US.UTF-8", "LABCTL_LANG": "ja"}, Japanese},
		{"LABCTL_LANG=en over a Japanese locale", "ja", map[string]string{"LC_ALL": "ja_JP.UTF-8", "LABCTL_LANG": "en"}, English},
		{"LABCTL_LANG a locale", "en", map[string]string{"LABCTL_LANG": "ja_JP.UTF-8"}, Japanese},
		{"LABCTL_LANG unknown is ignored", "ja", map[string]string{"LANG": "en_US", "LABCTL_LANG": "ko"}, English},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Choose(tt.lab, func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("Choose(%q, %v) = %q, want %q", tt.lab, tt.env, got, tt.want)
			}
		})
	}
}

var verb = regexp.MustCompile(`%[-+# 0]*[0-9]*[a-zA-Z%]`)

// TestCatalogsAgree guards against a translation that takes other
// arguments than the English text, or is missing.
func TestCatalogsAgree(t *testing.T) {
	en := reflect.ValueOf(*New(English))
	ja := reflect.ValueOf(*New(Japanese))
	typ := en.Type()
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		if f.Type.Kind() != reflect.String || f.Name == "Lang" {
			continue
		}
		e, j := en.Field(i).String(), ja.Field(i).String()
		if e == "" || j == "" {
			t.Errorf("%s: empty text (en %q, ja %q)", f.Name, e, j)
			continue
		}
		if e == j {
			t.Errorf("%s: not translated: %q", f.Name, e)
		}
		ev, jv := verb.FindAllString(e, -1), verb.FindAllString(j, -1)
		if !reflect.DeepEqual(ev, jv) {
			t.Errorf("%s: verbs differ: en %v, ja %v", f.Name, ev, jv)
		}
	}
	if New("fr").Lang != English {
		t.Errorf("an unknown language must fall back to English")
	}
}
