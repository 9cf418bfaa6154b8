package checks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// checkFile runs a file check. Fields are checked in this order and the
// first that does not hold is reported: exists, type, executable,
// notInside, writtenDuringProbe, equals, contains, matches, notMatches, lines, script, field.
// Type and mode are those of the path with its symbolic links resolved;
// lines holding only white space do not count as non-empty.
//
// pass: every set field holds. fail: the path is missing (or present when
// it must be absent), leads outside the learner's files (see
// resolveLearnerPath), is of the wrong type or mode, resolves inside notInside,
// is not a regular file when its content is needed, is over 4 MiB, or its
// content does not meet an assertion; a reference to the learner's work
// that cannot be read is a failure too. error: an invalid regular
// expression, script name or type, or a file the checker cannot read.
func checkFile(ctx context.Context, env Env, fc *lab.FileCheck) error {
	if sf, ok := env.Sandbox[fc.Path]; ok {
		return checkSandboxFile(ctx, env, fc, sf)
	}
	want := fc.Exists == nil || *fc.Exists
	resolved, host, err := resolveLearnerPath(env, fc.Path)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(host)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		if !want {
			return nil
		}
		return failf(msg.FileExpectExist, fc.Path)
	}
	if err != nil {
		return fmt.Errorf("inspecting %s: %w", fc.Path, err)
	}
	notInside := ""
	if fc.NotInside != "" {
		if notInside, _, err = resolveInRoot(env.Root, fc.NotInside); err != nil {
			return err
		}
	}
	return checkFound(ctx, env, fc, resolved, notInside, fi, func() ([]byte, error) { return readRegular(host, fc.Path) })
}

// checkSandboxFile runs a file check of a path of the sandbox that the
// host read for the checker (see sandbox_files.go).
func checkSandboxFile(ctx context.Context, env Env, fc *lab.FileCheck, sf *SandboxFile) error {
	want := fc.Exists == nil || *fc.Exists
	switch sf.State {
	case SandboxOutside:
		return failf(msg.LeadsOutside, fc.Path, shortText(sf.Resolved))
	case SandboxMissing:
		if !want {
			return nil
		}
		return failf(msg.FileExpectExist, fc.Path)
	case SandboxError:
		return errors.New(sf.Err)
	case SandboxFound, SandboxTooLarge:
	default:
		return fmt.Errorf("the host read %s from the sandbox as %q, which the checker does not know", fc.Path, sf.State)
	}
	return checkFound(ctx, env, fc, sf.Resolved, path.Clean(fc.NotInside), sandboxInfo{sf}, func() ([]byte, error) {
		return sandboxContent(sf, fc.Path)
	})
}

// checkFound runs the assertions of fc on a path that exists: resolved is
// where its links led, notInside the resolved notInside directory ("" for
// none), fi describes it (links not followed at the end: a resolved path
// has none) and read gives a regular file's content.
func checkFound(ctx context.Context, env Env, fc *lab.FileCheck, resolved, notInside string, fi fs.FileInfo, read func() ([]byte, error)) error {
	want := fc.Exists == nil || *fc.Exists
	if !want {
		return failf(msg.FileExpectAbsent, fc.Path, describeMode(fi.Mode()))
	}
	switch fc.Type {
	case "":
	case "file":
		if !fi.Mode().IsRegular() {
			return failf(msg.FileExpectRegular, fc.Path, describeMode(fi.Mode()))
		}
	case "dir":
		if !fi.IsDir() {
			return failf(msg.FileExpectDir, fc.Path, describeMode(fi.Mode()))
		}
	default:
		return fmt.Errorf("unknown file type %q: use file or dir", fc.Type)
	}
	if fc.Executable != nil {
		exec := fi.Mode().Perm()&0o111 != 0
		if *fc.Executable && !exec {
			return failf(msg.FileExpectExec, fc.Path, fi.Mode().Perm())
		}
		if !*fc.Executable && exec {
			return failf(msg.FileExpectNotExec, fc.Path, fi.Mode().Perm())
		}
	}
	if fc.NotInside != "" && isInside(resolved, notInside) {
		return failf(msg.FileExpectOutside, fc.Path, fc.NotInside, resolved)
	}
	if fc.WrittenDuringProbe {
		if err := checkWrittenDuringProbe(env, fc.Path, fi); err != nil {
			return err
		}
	}
	if !needsContent(fc) {
		return nil
	}
	data, err := read()
	if err != nil {
		return err
	}
	return checkContent(ctx, env, fc, data)
}

func needsContent(fc *lab.FileCheck) bool {
	return fc.Equals != nil || len(fc.Contains) > 0 || len(fc.Matches) > 0 || len(fc.NotMatches) > 0 ||
		fc.Lines != nil || fc.Script != nil || fc.Field != nil
}

func checkContent(ctx context.Context, env Env, fc *lab.FileCheck, data []byte) error {
	text := string(data)
	if fc.Equals != nil {
		op, err := resolveOperand(ctx, env, fc.Equals)
		if err != nil {
			return err
		}
		want, got := strings.TrimSpace(stringify(op.value)), strings.TrimSpace(text)
		if want != got {
			var from any = ""
			if fc.Equals.IsRef() {
				from = msg.T(msg.FromRefSuffix, fc.Equals.Ref)
			}
			return failf(msg.FileExpectExactly, fc.Path, quoteShort(want), from, quoteShort(got))
		}
	}
	for _, s := range fc.Contains {
		if !strings.Contains(text, s) {
			return failf(msg.FileExpectContains, fc.Path, s)
		}
	}
	for _, expr := range fc.Matches {
		re, err := compileMultiline(expr)
		if err != nil {
			return err
		}
		if !re.MatchString(text) {
			return failf(msg.FileExpectMatch, fc.Path, expr)
		}
	}
	for _, expr := range fc.NotMatches {
		re, err := compileMultiline(expr)
		if err != nil {
			return err
		}
		if m := re.FindString(text); re.MatchString(text) {
			return failf(msg.FileExpectNotMatch, fc.Path, expr, quoteShort(m))
		}
	}
	if fc.Lines != nil {
		n := 0
		for _, line := range strings.Split(text, "\n") {
			if strings.TrimSpace(line) != "" {
				n++
			}
		}
		if !inRange(n, fc.Lines) {
			return failf(msg.FileExpectLines, fc.Path, rangeText(fc.Lines), n)
		}
	}
	if fc.Script != nil {
		if err := checkScriptShare(fc.Path, text, fc.Script); err != nil {
			return err
		}
	}
	if fc.Field != nil {
		format, err := formatOf(fc.Path, fc.Field.Format)
		if err != nil {
			return err
		}
		docs, err := decodeDocuments(data, format, fc.Path)
		if err != nil {
			return err
		}
		return checkFieldAssert(ctx, env, fc.Field, docs, msg.T(msg.WhereIn, fc.Path))
	}
	return nil
}

// checkScriptShare requires at least s.Min of the letters of text (letters
// only: digits, punctuation and spaces do not count) to be in the Unicode
// script s.Name. Letters in code (spans, fenced and indented blocks) do not
// count, nor ASCII letters unless the script is Latin: see scriptLetters.
// Text without counted letters has a share of zero.
func checkScriptShare(shown, text string, s *lab.ScriptShare) error {
	table, ok := unicode.Scripts[s.Name]
	if !ok {
		return fmt.Errorf("unknown Unicode script %q (e.g. Latin, Han, Hangul, Cyrillic)", s.Name)
	}
	letters, in := scriptLetters(text, table, s.Name == "Latin")
	share := 0.0
	if letters > 0 {
		share = float64(in) / float64(letters)
	}
	if share < s.Min {
		return failf(msg.FileExpectScript,
			percent(s.Min), shown, msg.Script(s.Name), percent(share), in, letters)
	}
	return nil
}

func percent(f float64) string {
	return strconv.FormatFloat(f*100, 'f', -1, 64) + "%"
}

func compileMultiline(expr string) (*regexp.Regexp, error) {
	re, err := regexp.Compile("(?m)" + expr)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %w", expr, err)
	}
	return re, nil
}

// quoteShort quotes s for a message, cut to maxShown characters.
func quoteShort(s string) string {
	if r := []rune(s); len(r) > maxShown {
		return strconv.Quote(string(r[:maxShown])) + "…"
	}
	return strconv.Quote(s)
}
