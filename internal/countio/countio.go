// Package countio counts the bytes that pass through a reader.
package countio

import "io"

// Reader counts the bytes read through it in N.
type Reader struct {
	R io.Reader
	N int64
}

func (c *Reader) Read(p []byte) (int, error) {
	n, err := c.R.Read(p)
	c.N += int64(n)
	return n, err
}
