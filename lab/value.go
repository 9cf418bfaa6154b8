package lab

import (
	"encoding/json"
	"time"
)

// Value is either a literal (any YAML value: string, number, boolean, list,
// mapping) or a reference, written {ref: "..."}, to a value read at check
// time. References are the one mechanism for comparing values across
// sources:
//
//	git:/root/gitops/repo@HEAD                                          the full hash of HEAD
//	git:/root/gitops/repo@HEAD:apps/web/deployment.yaml#spec.replicas   a field of a file at HEAD
//	file:/root/gitops/out/sync-report.json#repo_commit                  a field of a file (JSON or YAML)
//	kube:apps/v1/Deployment/gitops-lab/web#spec.replicas                a field of a cluster object
//	kube:v1/Namespace//gitops-lab#metadata.name                         (cluster-scoped: empty namespace)
//
// Paths after # use the field path syntax of FieldAssert.
type Value struct {
	Literal any    // set when Ref is empty
	Ref     string // the reference, when the value is {ref: ...}
}

// IsRef reports whether v is a reference.
func (v Value) IsRef() bool { return v.Ref != "" }

// MarshalJSON writes a literal as itself and a reference as {"ref": "..."}.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.Ref != "" {
		return json.Marshal(map[string]string{"ref": v.Ref})
	}
	return json.Marshal(v.Literal)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (v *Value) UnmarshalJSON(b []byte) error {
	var ref struct {
		Ref string `json:"ref"`
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) == nil && len(probe) == 1 && probe["ref"] != nil {
		if err := json.Unmarshal(b, &ref); err == nil && ref.Ref != "" {
			*v = Value{Ref: ref.Ref}
			return nil
		}
	}
	var lit any
	if err := json.Unmarshal(b, &lit); err != nil {
		return err
	}
	*v = Value{Literal: lit}
	return nil
}

// Duration is a time.Duration written as a Go duration string ("10s", "1m30s").
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	p, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	d.Duration = p
	return nil
}
