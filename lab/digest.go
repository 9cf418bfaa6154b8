package lab

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
)

// Digest identifies a lab definition: "sha256:<hex>" over the lab file's
// bytes as loaded and a hash of its fixtures tree. The tree hash covers every
// directory and regular file by path (in lexical order), with a file's
// executable bit and the SHA-256 of its content, so renaming, editing or
// chmod +x of a fixture changes the digest and nothing else (timestamps,
// owners) does. fixtures may be nil for a lab without fixtures.
func Digest(labFile []byte, fixtures fs.FS) (string, error) {
	tree, err := TreeHash(fixtures)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	fmt.Fprintf(h, "labctl-lab-digest-v1\nlab %d\n", len(labFile))
	h.Write(labFile)
	fmt.Fprintf(h, "\nfixtures %s\n", tree)
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// TreeHash is the hex SHA-256 of a file tree as described at Digest.
func TreeHash(fsys fs.FS) (string, error) {
	h := sha256.New()
	if fsys == nil {
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			fmt.Fprintf(h, "d %q\n", path)
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			sum, err := fileHash(fsys, path)
			if err != nil {
				return err
			}
			exec := "-"
			if info.Mode().Perm()&0o111 != 0 {
				exec = "x"
			}
			fmt.Fprintf(h, "f %q %s %s\n", path, exec, sum)
		default:
			fmt.Fprintf(h, "o %q %s\n", path, d.Type())
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hashing the lab's fixtures: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func fileHash(fsys fs.FS, path string) (string, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
