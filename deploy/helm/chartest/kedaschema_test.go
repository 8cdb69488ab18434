package chartest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// scaledObject is what the wiring checks read of a KEDA ScaledObject
// (the schema has checked all of it).
type scaledObject struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		ScaleTargetRef struct {
			Name string `json:"name"`
			Kind string `json:"kind"`
		} `json:"scaleTargetRef"`
		MinReplicaCount *int32 `json:"minReplicaCount"`
		MaxReplicaCount *int32 `json:"maxReplicaCount"`
		Advanced        struct {
			ScalingModifiers struct {
				Formula, Target, ActivationTarget, MetricType string
			} `json:"scalingModifiers"`
		} `json:"advanced"`
		Triggers []trigger `json:"triggers"`
	} `json:"spec"`
}

// trigger is one of a ScaledObject's triggers.
type trigger struct {
	Type              string            `json:"type"`
	Name              string            `json:"name"`
	Metadata          map[string]string `json:"metadata"`
	AuthenticationRef *struct {
		Name string `json:"name"`
	} `json:"authenticationRef"`
}

// triggerAuthentication is what the checks read of a TriggerAuthentication.
type triggerAuthentication struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		SecretTargetRef []struct {
			Parameter, Name, Key string
		} `json:"secretTargetRef"`
	} `json:"spec"`
}

var (
	schemasOnce sync.Once
	schemas     map[string]*jsonschema.Schema
	schemasErr  error
)

// keda validates y against the CRD schema of kind (testdata/keda, KEDA's
// own), made strict, decodes its metadata strictly into ObjectMeta, and
// appends it to list.
func keda[T any](t *testing.T, kind string, y []byte, list *[]*T) error {
	t.Helper()
	schemasOnce.Do(func() { schemas, schemasErr = loadKedaSchemas() })
	if schemasErr != nil {
		t.Fatalf("KEDA schemas: %v", schemasErr)
	}
	j, err := yaml.YAMLToJSON(y)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(j))
	if err != nil {
		return err
	}
	if err := schemas[kind].Validate(inst); err != nil {
		return fmt.Errorf("against KEDA's CRD schema: %w", err)
	}
	var meta struct {
		Metadata json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(j, &meta); err != nil {
		return err
	}
	if err := yaml.UnmarshalStrict(meta.Metadata, new(metav1.ObjectMeta)); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	v := new(T)
	if err := json.Unmarshal(j, v); err != nil {
		return err
	}
	*list = append(*list, v)
	return nil
}

// loadKedaSchemas compiles the openAPIV3Schema of KEDA's v1alpha1
// ScaledObject and TriggerAuthentication CRDs, made strict.
func loadKedaSchemas() (map[string]*jsonschema.Schema, error) {
	out := map[string]*jsonschema.Schema{}
	for kind, file := range map[string]string{
		"ScaledObject":          "keda.sh_scaledobjects.yaml",
		"TriggerAuthentication": "keda.sh_triggerauthentications.yaml",
	} {
		s, err := crdSchema(filepath.Join("testdata", "keda", file))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource("keda:"+kind, strictSchema(s)); err != nil {
			return nil, err
		}
		if out[kind], err = c.Compile("keda:" + kind); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	return out, nil
}

// crdSchema is the v1alpha1 openAPIV3Schema of a CRD file.
func crdSchema(file string) (map[string]any, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var crd struct {
		Spec struct {
			Versions []struct {
				Name   string `json:"name"`
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return nil, err
	}
	for _, v := range crd.Spec.Versions {
		if v.Name == "v1alpha1" {
			return v.Schema.OpenAPIV3Schema, nil
		}
	}
	return nil, fmt.Errorf("no v1alpha1 schema")
}

// strictSchema makes an OpenAPI v3 structural schema refuse unknown
// fields: every object with properties and no additionalProperties (nor
// x-kubernetes-preserve-unknown-fields) gets additionalProperties: false.
// The API server prunes such fields silently; a chart that writes one has
// a typo. (x-kubernetes-* keywords and formats are annotations to the
// validator; the one CEL rule, min <= max replicas, is checked by hand.)
func strictSchema(s any) any {
	v, ok := s.(map[string]any)
	if !ok {
		return s
	}
	if props, ok := v["properties"].(map[string]any); ok {
		for name, p := range props {
			props[name] = strictSchema(p)
		}
		_, extra := v["additionalProperties"]
		_, keep := v["x-kubernetes-preserve-unknown-fields"]
		if !extra && !keep {
			v["additionalProperties"] = false
		}
	}
	for _, k := range []string{"items", "additionalProperties"} {
		if sub, ok := v[k].(map[string]any); ok {
			v[k] = strictSchema(sub)
		}
	}
	for _, k := range []string{"anyOf", "allOf", "oneOf"} {
		if list, ok := v[k].([]any); ok {
			for i, sub := range list {
				list[i] = strictSchema(sub)
			}
		}
	}
	return v
}
