package app

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// The output formats of -o, --output.
const (
	textFormat  = "text"
	jsonFormat  = "json"
	junitFormat = "junit"
)

// formatValue is the value of -o, --output: one of the command's formats,
// checked as the flag is parsed so a wrong one is a usage error.
type formatValue struct {
	formats []string
	value   *string
}

func (f *formatValue) String() string { return *f.value }
func (f *formatValue) Type() string   { return "FORMAT" }

func (f *formatValue) Set(s string) error {
	s = strings.ToLower(s)
	if !slices.Contains(f.formats, s) {
		err := fmt.Sprintf("unknown format %q: use %s", s, orList(f.formats))
		if strings.ContainsAny(s, "./") {
			err += " (-o, --output names the format; write to a file with --output-file PATH)"
		}
		return fmt.Errorf("%s", err)
	}
	*f.value = s
	return nil
}

// addOutputFlag gives cmd -o, --output FORMAT, one of formats (the first is
// the default), completed by the shell.
func addOutputFlag(cmd *cobra.Command, format *string, formats ...string) *formatValue {
	*format = formats[0]
	v := &formatValue{formats: formats, value: format}
	cmd.Flags().VarP(v, "output", "o", "output format: "+orList(formats))
	// Registering a completion fails only for an unknown flag.
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	return v
}

// addReportFlags gives a command that writes a report -o, --output FORMAT,
// --output-file PATH, and the old --format spelling of -o, hidden; the
// command's run calls deprecatedFormat.
func addReportFlags(cmd *cobra.Command, format, file *string) {
	v := addOutputFlag(cmd, format, textFormat, jsonFormat, junitFormat)
	fl := cmd.Flags()
	fl.StringVar(file, "output-file", "", "write the report to PATH (atomically) instead of stdout")
	_ = cmd.MarkFlagFilename("output-file")
	fl.Var(v, "format", "old spelling of --output")
	_ = fl.MarkHidden("format")
}

// deprecatedFormat says once, on stderr, that --format is now -o, --output.
func deprecatedFormat(cmd *cobra.Command, errOut io.Writer) {
	if cmd.Flags().Changed("format") {
		fmt.Fprintln(errOut, "labctl: --format is deprecated: use -o, --output FORMAT")
	}
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// orList joins items as "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
