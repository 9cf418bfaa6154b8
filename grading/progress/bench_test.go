package progress

import (
	"context"
	"testing"
)

// BenchmarkSave measures one atomic save (write, fsync, rename, directory
// sync) of a progress file with a grade history.
func BenchmarkSave(b *testing.B) {
	s := NewStore(b.TempDir())
	p := sample()
	for i := 0; i < 50; i++ {
		p.AddGrade(p.Grades[0])
	}
	for b.Loop() {
		if err := s.Save(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUpdate measures a locked read-modify-write.
func BenchmarkUpdate(b *testing.B) {
	s := NewStore(b.TempDir())
	if err := s.Save(sample()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if err := s.Update(context.Background(), "gitops-drift", func(p *Progress) error { p.Attempts["x"]++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
}
