package checks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/labctl/labctl/internal/msg"
	"github.com/labctl/labctl/lab"
)

// maxFileSize is the most any check reads of one file: the content,
// field, lines and script assertions and file references read whole files
// into memory, and a lab's files are a few KiB. A learner's 10 GiB sparse
// file fails at this bound instead of filling the grader's memory.
const maxFileSize = 4 << 20

// readRegular reads the regular file at host (a resolved path). shown is
// the path as the lab names it, for messages. A missing file or one that is
// not a regular file (a directory, a FIFO, a device) is the learner's to
// fix: a failure. A FIFO or device is never opened for reading, so it
// cannot block the check, and nothing beyond maxFileSize is read.
func readRegular(host, shown string) ([]byte, error) {
	f, err := openRegular(host, shown, maxFileSize)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", shown, err)
	}
	if len(data) > maxFileSize {
		return nil, failf(msg.TooLarge, shown, sizeText(maxFileSize))
	}
	return data, nil
}

// describeMode names the type of a file for messages.
func describeMode(m fs.FileMode) msg.Text {
	switch {
	case m.IsRegular():
		return msg.T(msg.ModeRegular)
	case m.IsDir():
		return msg.T(msg.ModeDir)
	case m&fs.ModeSymlink != 0:
		return msg.T(msg.ModeSymlink)
	case m&fs.ModeNamedPipe != 0:
		return msg.T(msg.ModeFIFO)
	case m&fs.ModeSocket != 0:
		return msg.T(msg.ModeSocket)
	case m&fs.ModeDevice != 0:
		return msg.T(msg.ModeDevice)
	}
	return msg.T(msg.ModeSpecial)
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
func decodeDocuments(data []byte, format string, shown any) ([]any, error) {
	if format == "json" {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, failf(msg.NotValidJSON, shown, msg.Detail(err.Error()))
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, failf(msg.JSONTrailing, shown)
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
			return nil, failf(msg.NotValidYAML, shown, msg.Detail(err.Error()))
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
