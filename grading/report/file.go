package report

import (
	"bytes"
	"fmt"

	"github.com/labctl/labctl/internal/atomicfile"
	"github.com/labctl/labctl/internal/msg"
)

// WriteFile renders r in format f into path atomically (see package
// atomicfile), so a reader never sees half a report.
func WriteFile(path string, r *Report, f Format, c *msg.Catalog) error {
	var b bytes.Buffer
	if err := Write(&b, r, f, c); err != nil {
		return err
	}
	return writeFile(path, b.Bytes())
}

// writeFile writes a rendered report to path atomically.
func writeFile(path string, b []byte) error {
	if err := atomicfile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("writing the report to %s: %w", path, err)
	}
	return nil
}
