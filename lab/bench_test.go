package lab

import (
	"os"
	"testing"
)

func BenchmarkParse(b *testing.B) {
	for _, name := range []string{"testdata/valid_full.yaml", "../lab.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Parse(name, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParseBroken(b *testing.B) {
	data, err := os.ReadFile("testdata/broken.yaml")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("broken.yaml", data); err == nil {
			b.Fatal("broken.yaml parsed")
		}
	}
}
