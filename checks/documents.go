package checks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/lab"
)

// maxFileSize is the most any check reads of one file.
const maxFileSize = 4 << 20

// readRegular reads the regular file at host (a resolved path). shown is
// the path as the lab names it, for messages. A missing file or one that is
// not a regular file (a directory, a FIFO, a device) is the learner's to
// fix: a failure. A FIFO or device is never opened for reading, so it
// cannot block the check.
func readRegular(host, shown string) ([]byte, error) {
	fi, err := os.Lstat(host)
	if errors.Is(err, fs.ErrNotExist) || isNotDir(err) {
		return nil, failf("%s does not exist", shown)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, failf("%s is a %s, expected a regular file", shown, describeMode(fi.Mode()))
	}
	f, err := os.OpenFile(host, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, failf("%s changed while being read; expected a regular file", shown)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if len(data) > maxFileSize {
		return nil, failf("%s is larger than %d MiB, more than any check reads", shown, maxFileSize>>20)
	}
	return data, nil
}

// describeMode names the type of a file for messages.
func describeMode(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// formatOf returns the document format of a file: the explicit format, else
// JSON for a .json name and YAML for anything else.
func formatOf(name, format string) (string, error) {
	switch format {
	case "json", "yaml":
		return format, nil
	case "":
		if strings.HasSuffix(strings.ToLower(name), ".json") {
			return "json", nil
		}
		return "yaml", nil
	}
	return "", fmt.Errorf("unknown format %q for %s: use json or yaml", format, name)
}

// decodeDocuments parses data as JSON or YAML into normalized values. A
// YAML stream of several documents gives one value per document (a field
// path then selects from each); an empty file gives none. Content that does
// not parse is the learner's: a failure naming where it broke.
func decodeDocuments(data []byte, format, shown string) ([]any, error) {
	if format == "json" {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, failf("%s is not valid JSON: %v", shown, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, failf("%s is not valid JSON: unexpected data after the first value", shown)
		}
		return []any{normalize(v)}, nil
	}
	var docs []any
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, failf("%s is not valid YAML: %v", shown, err)
		}
		docs = append(docs, normalize(v))
	}
}

// selectAll applies p to every document.
func selectAll(p lab.Path, docs []any) []selected {
	var out []selected
	for _, d := range docs {
		out = append(out, selectValues(p, d)...)
	}
	return out
}
