package e2etest

import (
	"context"
	"os"
	"testing"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is Debian's Chromium, the browser the e2e tests drive.
const ChromiumPath = "/usr/bin/chromium"

// Chromium starts Debian's Chromium, headless, with a fresh profile
// (chromedp makes one and removes it), and returns the context of its
// first tab; the browser ends with the test.
func Chromium(t testing.TB) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Fatalf("%s is missing: the browser tests need Debian's Chromium (make browser)", ChromiumPath)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(ChromiumPath),
		chromedp.NoSandbox, // as root, Chromium refuses its own sandbox
		chromedp.DisableGPU,
		chromedp.Flag("disable-component-update", true),
		chromedp.WindowSize(1280, 800),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() {
		chromedp.Cancel(ctx)
		cancel()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", ChromiumPath, err)
	}
	return ctx
}
