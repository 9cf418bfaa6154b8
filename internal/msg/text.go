package msg

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Key names one keyed text of the catalogue: a message of the checks, put
// into words only when it is shown (see Text).
type Key string

// Text is a message not yet put into words: a key and the arguments of its
// format. An argument that is itself a Text, a []Text or a Script is put
// into words in the same language; any other argument (a path, a value, a
// regular expression) is shown as it is, in every language.
type Text struct {
	Key  Key
	Args []any
}

// T makes a Text.
func T(key Key, args ...any) Text { return Text{Key: key, Args: args} }

// String is the text in English, for logs and errors.
func (t Text) String() string { return New(English).Render(t) }

// Detail is a tool's own words, such as a parser's diagnostic: shown as
// they are, quoted in every language but English so the reader sees where
// labctl's words stop and the tool's begin.
type Detail string

// Clock is a moment a message shows on the learner's clock: in the
// catalogue's Zone, with the zone's name, in Layout.
type Clock struct {
	T      time.Time
	Layout string
}

// TimeOfDay shows t as 15:04:05 and the zone.
func TimeOfDay(t time.Time) Clock { return Clock{t, "15:04:05 MST"} }

// TimeOfDayMilli shows t to the millisecond.
func TimeOfDayMilli(t time.Time) Clock { return Clock{t, "15:04:05.000 MST"} }

// DateTime shows t with its date.
func DateTime(t time.Time) Clock { return Clock{t, time.DateTime + " MST"} }

// Script is the name of a Unicode script (Latin, Hangul, …) as a lab
// writes it; it is shown in the reader's language when the catalogue knows
// it, as written otherwise.
type Script string

// Render puts t into words in c's language. A key missing from the
// language falls back to English; a key missing from both is taken as an
// English format itself (a text written in place, not yet catalogued), so
// nothing is ever lost.
func (c *Catalog) Render(t Text) string {
	format, ok := keyed[c.Lang][t.Key]
	if !ok {
		format, ok = keyed[English][t.Key]
	}
	args := make([]any, len(t.Args))
	for i, a := range t.Args {
		args[i] = c.renderArg(a)
	}
	if !ok {
		format = string(t.Key)
	}
	return fmt.Sprintf(format, args...)
}

func (c *Catalog) renderArg(a any) any {
	switch v := a.(type) {
	case Text:
		return c.Render(v)
	case []Text:
		parts := make([]string, len(v))
		for i, t := range v {
			parts[i] = c.Render(t)
		}
		return strings.Join(parts, c.Render(T(ListSeparator)))
	case Detail:
		if c.Lang == English {
			return string(v)
		}
		return strconv.Quote(string(v))
	case Clock:
		zone := c.Zone
		if zone == nil {
			zone = time.UTC
		}
		return v.T.In(zone).Format(v.Layout)
	case Script:
		if name, ok := scriptNames[c.Lang][string(v)]; ok {
			return name
		}
		return string(v)
	}
	return a
}

// scriptNames are the Unicode scripts a lab is likely to require, by
// language; others are shown under their Unicode name.
var scriptNames = map[Lang]map[string]string{
	Japanese: {
		"Latin": "ラテン文字", "Han": "漢字", "Hiragana": "ひらがな", "Katakana": "カタカナ",
		"Hangul": "ハングル", "Cyrillic": "キリル文字", "Greek": "ギリシャ文字", "Arabic": "アラビア文字",
	},
}
