package importer

import (
	"fmt"
	"strings"
)

// page is one Killercoda Markdown text mapped to labctl's: the text the
// learner reads, the blocks taken out of it, and what the author must decide.
type page struct {
	text string
	// hints are the bodies of collapsed blocks titled as tips or hints.
	hints []string
	// solution is the code of collapsed blocks titled as solutions.
	solution []string
	// solutionText is those blocks as the learner was to read them: the
	// step's solution, which the browser view keeps closed until asked.
	solutionText []string
	// execs are the code blocks the learner was to run with a click.
	execs []string
	// fences are the code blocks without an action whose language is a
	// shell's or none: on a platform without actions, the commands shown.
	fences []string
	// todo lists what the mapping dropped or could not map.
	todo []string
}

var (
	// detailsRE is one collapsed block: <details><summary>S</summary>B</details>.
	detailsRE = lazyRegexp(`(?is)<details[^>]*>\s*<summary[^>]*>(.*?)</summary>(.*?)</details>`)
	// solutionRE and hintRE recognise a block's summary.
	solutionRE = lazyRegexp(`(?i)solution|solve|answer|lösung|solución|réponse|解答|答え|정답|해답`)
	hintRE     = lazyRegexp(`(?i)tip|hint|help|clue|indice|pista|ヒント|힌트`)
	// fenceRE is a fenced code block, with the action Killercoda puts
	// after its closing fence ({{exec}}, {{copy}}), if any.
	fenceRE = lazyRegexp("(?s)```[^\\n`]*\\n(.*?)```(\\{\\{\\s*([a-zA-Z]+)[^}]*\\}\\})?")
	// inlineActionRE is inline code with an action: `ls -l`{{exec}}.
	inlineActionRE = lazyRegexp("`([^`\\n]+)`\\{\\{\\s*([a-zA-Z]+)[^}]*\\}\\}")
	// actionRE is any action marker left.
	actionRE = lazyRegexp(`\{\{\s*(exec|execute|copy)[^}]*\}\}`)
	// trafficRE is a link to a port of the scenario's machine.
	trafficRE = lazyRegexp(`\{\{\s*TRAFFIC_[A-Z0-9_]+\s*\}\}`)
	breakRE   = lazyRegexp(`(?i)<br\s*/?>`)
	imageRE   = lazyRegexp(`!\[[^\]]*\]\(([^)\s]+)[^)]*\)`)
	blankRE   = lazyRegexp(`\n{3,}`)
	// trailingRE is white space at the end of a line (a Markdown line
	// break is better written as a blank line).
	trailingRE = lazyRegexp(`(?m)[ \t]+$`)
	// shellFenceRE is a fence opened with a shell's language or none.
	shellFenceRE = lazyRegexp("^```(|bash|sh|shell|console|run)[ \t]*\n")
)

// mapPage maps Killercoda's Markdown (collapsed blocks, {{exec}} and
// {{copy}} actions, traffic links, <br>) to the Markdown labctl shows.
func mapPage(md string) page {
	var p page
	if open, closed := len(detailsOpenRE.FindAllString(md, -1)), strings.Count(strings.ToLower(md), "</details>"); open > closed {
		// An unclosed block runs to the end of the page, as a browser shows it.
		md += strings.Repeat("\n</details>\n", open-closed)
		p.todo = append(p.todo, "a <details> block is not closed; it was read as running to the end of the page: close it where it ends")
	}
	md = detailsRE.ReplaceAllStringFunc(md, func(block string) string {
		m := detailsRE.FindStringSubmatch(block)
		summary, body := strings.TrimSpace(stripTags(m[1])), m[2]
		switch {
		case solutionRE.MatchString(summary):
			if text := strings.TrimSpace(breakRE.ReplaceAllString(cleanActions(body), "\n")); text != "" {
				p.solutionText = append(p.solutionText, text)
			}
			fences := fenceRE.FindAllStringSubmatchIndex(body, -1)
			for i, f := range fences {
				if i > 0 && orRE.MatchString(strings.TrimSpace(stripTags(body[fences[i-1][1]:f[0]]))) {
					p.todo = append(p.todo, "its solution block (\""+summary+"\") gives another way after \"or\"; the solve keeps the first: add the other as an alternative (alternatives:)")
					continue
				}
				code := strings.TrimSpace(body[f[2]:f[3]])
				if code == "" {
					continue
				}
				if yamlFenceRE.MatchString(body[f[0]:f[1]]) || manifestRE.MatchString(code) {
					code = applyManifest(code, fileApplied(body, fences[i+1:]))
				} else {
					code = p.runnable(code, "its solution block (\""+summary+"\")")
				}
				if code != "" {
					p.solution = append(p.solution, code)
				}
			}
			if len(fences) == 0 {
				// A solution written without a fence: its text is the script.
				if code := strings.TrimSpace(stripTags(breakRE.ReplaceAllString(cleanActions(body), "\n"))); code != "" {
					p.solution = append(p.solution, p.runnable(code, "its solution block (\""+summary+"\")"))
					p.todo = append(p.todo, "its solution block (\""+summary+"\") has no code fence; its text became the step's solve: read it as a script")
				}
			}
			return ""
		case hintRE.MatchString(summary):
			p.hints = append(p.hints, strings.TrimSpace(breakRE.ReplaceAllString(cleanActions(body), "\n")))
			return ""
		default:
			return "\n**" + summary + "**\n\n" + strings.TrimSpace(body) + "\n"
		}
	})
	for _, f := range fenceRE.FindAllStringSubmatch(md, -1) {
		if action := strings.ToLower(f[3]); action == "exec" || action == "execute" {
			if code := p.runnable(strings.TrimSpace(f[1]), "a command to run"); code != "" {
				p.execs = append(p.execs, code)
			}
		}
	}
	for _, f := range inlineActionRE.FindAllStringSubmatch(md, -1) {
		if action := strings.ToLower(f[2]); action == "exec" || action == "execute" {
			if code := p.runnable(strings.TrimSpace(f[1]), "a command to run"); code != "" {
				p.execs = append(p.execs, code)
			}
		}
	}
	if trafficRE.MatchString(md) {
		p.todo = append(p.todo, "the text links to ports of the scenario's machine ({{TRAFFIC_…}}); say how the learner reaches the service instead (kubectl port-forward, curl from the sandbox)")
	}
	if imgs := imageRE.FindAllStringSubmatch(md, -1); len(imgs) > 0 {
		var names []string
		for _, m := range imgs[:min(len(imgs), 3)] {
			names = append(names, m[1])
		}
		if len(imgs) > 3 {
			names = append(names, fmt.Sprintf("and %d more", len(imgs)-3))
		}
		p.todo = append(p.todo, fmt.Sprintf("the text shows %d image(s) (%s), which labctl's views do not show; describe them in words", len(imgs), strings.Join(names, ", ")))
	}
	for _, f := range fenceRE.FindAllStringSubmatch(md, -1) {
		if shellFenceRE.MatchString(f[0]) && f[3] == "" {
			if code := p.runnable(strings.TrimSpace(f[1]), "a code block"); code != "" {
				p.fences = append(p.fences, code)
			}
		}
	}
	md = cleanActions(md)
	md = breakRE.ReplaceAllString(md, "\n")
	md = trailingRE.ReplaceAllString(md, "")
	md = blankRE.ReplaceAllString(md, "\n\n")
	p.text = strings.TrimSpace(md)
	return p
}

// cleanActions removes Killercoda's action markers.
func cleanActions(s string) string { return actionRE.ReplaceAllString(s, "") }

var tagRE = lazyRegexp(`<[^>]*>`)

func stripTags(s string) string { return tagRE.ReplaceAllString(s, "") }

var (
	detailsOpenRE = lazyRegexp(`(?i)<details[\s>]`)
	// orRE is the text between two fences that offers the second as
	// another way: "OR", "**or**", "Alternatively:".
	orRE = lazyRegexp(`(?i)^(?:[*_]+\s*)?(?:or|alternatively|alternative(?:ly)?)\b`)
	// yamlFenceRE opens a YAML fence; manifestRE is a manifest's first line.
	yamlFenceRE = lazyRegexp("^```\\s*(?:yaml|yml)\\b")
	manifestRE  = lazyRegexp(`^(?:---\s*\n)?(?:#[^\n]*\n)*apiVersion:\s*\S`)
	// appliedFileRE is a later command applying a manifest file.
	appliedFileRE = lazyRegexp(`\b(?:kubectl|k)\s+(?:apply|create|replace)\b[^\n]*?\s-f\s*([^\s;&|-][^\s;&|]*\.ya?ml)\b`)
	// noSolveRE are commands a solve cannot run: they wait for a person
	// (an editor, an interactive shell) or never end (a watch).
	noSolveRE = lazyRegexp(`(?m)^\s*(?:sudo\s+)?(?:watch\s|vim?\s|nano\s|(?:kubectl|k)\s+(?:edit|attach)\b|(?:kubectl|k)\b[^\n]*?(?:\s(?:-w|--watch|--watch-only)(?:[\s=]|$)|\slogs\b[^\n]*?\s(?:-f|--follow)\b|\s(?:exec|run|debug)\b[^\n]*?\s(?:-it|-ti|--stdin\s+--tty|-i\s+-t|--tty)\b))`)
)

// runnable is code without the lines a solve cannot run (said in todo as
// what's), with a line's continuations.
func (p *page) runnable(code, what string) string {
	lines := strings.Split(code, "\n")
	var kept, dropped []string
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		for strings.HasSuffix(line, "\\") && i+1 < len(lines) {
			i++
			line += "\n" + lines[i]
		}
		if noSolveRE.MatchString(line) {
			dropped = append(dropped, oneLine(strings.ReplaceAll(line, "\\\n", " ")))
			continue
		}
		kept = append(kept, line)
	}
	for _, d := range dropped {
		p.todo = append(p.todo, fmt.Sprintf("%s runs %q, which waits for a person or never ends (an editor, an interactive shell, a watch, logs -f): it was left out of the solve; write what it does as a command that ends (kubectl patch, set, apply, exec without -it)", what, d))
	}
	return strings.TrimSpace(strings.Join(kept, "\n"))
}

// fileApplied is the manifest file the first of the later fences applies,
// or "".
func fileApplied(body string, later [][]int) string {
	for _, f := range later {
		if m := appliedFileRE.FindStringSubmatch(body[f[2]:f[3]]); m != nil {
			return m[1]
		}
	}
	return ""
}

// applyManifest makes a YAML fence of a solution a script: the manifest
// written to the file a later command applies, else applied from a
// here-document.
func applyManifest(manifest, file string) string {
	delim := "EOF"
	for strings.Contains("\n"+manifest+"\n", "\n"+delim+"\n") {
		delim += "_"
	}
	if file != "" {
		return "cat > " + quote(file) + " <<'" + delim + "'\n" + manifest + "\n" + delim
	}
	return "kubectl apply -f - <<'" + delim + "'\n" + manifest + "\n" + delim
}
