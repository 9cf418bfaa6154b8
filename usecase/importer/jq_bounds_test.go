package importer

import "testing"

// TestJQTestNumbersBeyondExact keeps in the command check a jq -e test
// whose number jq holds only as an approximate double or that no integer
// field can pass: mapped, it became a check that passes where jq never
// did (a literal too large for an int read as 0; one more than the
// largest int wrapped to the smallest).
func TestJQTestNumbersBeyondExact(t *testing.T) {
	for _, line := range []string{
		"kubectl get deploy web -o json | jq -e '.spec.replicas == 99999999999999999999'",
		"kubectl get deploy web -o json | jq -e '.spec.replicas > 9223372036854775807'",
		"kubectl get deploy web -o json | jq -e '.spec.replicas < -9223372036854775808'",
		"kubectl get deploy web -o json | jq -e '.spec.replicas == 9007199254740993'",
		"kubectl get pods -l app=web -o json | jq -e '.items | length > 9223372036854775807'",
	} {
		if c, _, _, ok := jqTest(line, "shop"); ok {
			t.Errorf("%s became the check %+v (kube %+v); want it left in the command check", line, c, c.Kube)
		}
	}
	// Numbers jq holds exactly are still mapped.
	for _, line := range []string{
		"kubectl get deploy web -o json | jq -e '.spec.replicas == 3'",
		"kubectl get deploy web -o json | jq -e '.spec.replicas > 2'",
		"kubectl get pods -l app=web -o json | jq -e '.items | length > 1'",
	} {
		if _, _, _, ok := jqTest(line, "shop"); !ok {
			t.Errorf("%s was not mapped", line)
		}
	}
}
