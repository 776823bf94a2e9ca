// Command validator decodes rendered Flux objects strictly into Flux's own API types and checks
// them with what those API packages offer (their getters, constants and defaults).
//
// Usage: validator FILE...; every YAML document of each file whose apiVersion is a Flux API is
// checked, other documents are skipped. It prints one line per problem, "FILE: KIND NAME: what",
// and exits 1 when there is any; on success it prints "checked N" (the Flux objects it read).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	helmv2 "github.com/fluxcd/helm-controller/api/v2"
	kustomizev1 "github.com/fluxcd/kustomize-controller/api/v1"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// check decodes one document into its Flux type and returns what is wrong with it.
type check func(doc []byte) []string

var checks = map[string]check{
	helmv2.GroupVersion.String() + "/" + helmv2.HelmReleaseKind:             typed(helmRelease),
	kustomizev1.GroupVersion.String() + "/" + kustomizev1.KustomizationKind: typed(kustomization),
	sourcev1.GroupVersion.String() + "/" + sourcev1.HelmRepositoryKind:      typed(nothingMore[sourcev1.HelmRepository]),
	sourcev1.GroupVersion.String() + "/" + sourcev1.GitRepositoryKind:       typed(gitRepository),
	sourcev1.GroupVersion.String() + "/" + sourcev1.OCIRepositoryKind:       typed(ociRepository),
	sourcev1.GroupVersion.String() + "/" + sourcev1.HelmChartKind:           typed(nothingMore[sourcev1.HelmChart]),
	sourcev1.GroupVersion.String() + "/" + sourcev1.BucketKind:              typed(nothingMore[sourcev1.Bucket]),
}

var fluxGroups = []string{helmv2.GroupVersion.Group, kustomizev1.GroupVersion.Group, sourcev1.GroupVersion.Group}

// strict decodes like the API server's strict field validation: an unknown field is an error.
func strict[T any](doc []byte) (*T, error) {
	var out T
	if err := yaml.UnmarshalStrict(doc, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// typed is a check that decodes the document strictly into T, then runs more checks on it.
func typed[T any](more func(*T) []string) check {
	return func(doc []byte) []string {
		obj, err := strict[T](doc)
		if err != nil {
			return []string{err.Error()}
		}
		return more(obj)
	}
}

func nothingMore[T any](*T) []string { return nil }

func oneOf[T ~string](value T, allowed ...T) bool {
	for _, a := range allowed {
		if value == a {
			return true
		}
	}
	return false
}

func helmRelease(hr *helmv2.HelmRelease) []string {
	var problems []string
	if hr.HasChartRef() == hr.HasChartTemplate() {
		problems = append(problems, "exactly one of spec.chart and spec.chartRef must be set")
	}
	if hr.HasChartRef() && !oneOf(hr.Spec.ChartRef.Kind, sourcev1.OCIRepositoryKind, sourcev1.HelmChartKind) {
		problems = append(problems, "spec.chartRef.kind "+hr.Spec.ChartRef.Kind+" is neither OCIRepository nor HelmChart")
	}
	if hr.HasChartTemplate() {
		ref := hr.Spec.Chart.Spec.SourceRef
		if !oneOf(ref.Kind, sourcev1.HelmRepositoryKind, sourcev1.GitRepositoryKind, sourcev1.BucketKind) {
			problems = append(problems, "spec.chart.spec.sourceRef.kind "+ref.Kind+" is no chart source")
		}
	}
	if hr.GetInstall().GetRemediation().GetRetries() < 0 || hr.GetUpgrade().GetRemediation().GetRetries() < 0 {
		problems = append(problems, "negative remediation retries")
	}
	if s := hr.GetUpgrade().GetRemediation().GetStrategy(); !oneOf(s, helmv2.RollbackRemediationStrategy, helmv2.UninstallRemediationStrategy) {
		problems = append(problems, "unknown upgrade remediation strategy "+string(s))
	}
	for _, policy := range []helmv2.CRDsPolicy{hr.GetInstall().CRDs, hr.GetUpgrade().CRDs} {
		if policy != "" && !oneOf(policy, helmv2.Skip, helmv2.Create, helmv2.CreateReplace) {
			problems = append(problems, "unknown CRDs policy "+string(policy))
		}
	}
	if hr.Spec.Values != nil && hr.GetValues() == nil {
		problems = append(problems, "spec.values is no map of values")
	}
	for _, ref := range hr.Spec.ValuesFrom {
		if !oneOf(ref.Kind, "ConfigMap", "Secret") {
			problems = append(problems, "spec.valuesFrom kind "+ref.Kind+" is neither ConfigMap nor Secret")
		}
	}
	if hr.GetTimeout().Duration <= 0 || hr.GetRequeueAfter() <= 0 {
		problems = append(problems, "spec.timeout and spec.interval must be positive durations")
	}
	return problems
}

func kustomization(k *kustomizev1.Kustomization) []string {
	var problems []string
	if !oneOf(k.Spec.SourceRef.Kind, sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind, sourcev1.BucketKind) {
		problems = append(problems, "spec.sourceRef.kind "+k.Spec.SourceRef.Kind+" is no source of manifests")
	}
	if k.GetTimeout() <= 0 || k.GetRequeueAfter() <= 0 {
		problems = append(problems, "spec.timeout and spec.interval must be positive durations")
	}
	if k.Spec.Wait && len(k.Spec.HealthChecks) > 0 {
		problems = append(problems, "spec.healthChecks is ignored with spec.wait")
	}
	return problems
}

func gitRepository(repo *sourcev1.GitRepository) []string {
	if repo.Spec.Reference == nil || (repo.Spec.Reference.Tag == "" && repo.Spec.Reference.Commit == "" && repo.Spec.Reference.SemVer == "") {
		return []string{"spec.ref pins no tag, semver or commit: a push upstream would change the cluster"}
	}
	return nil
}

func ociRepository(repo *sourcev1.OCIRepository) []string {
	var problems []string
	if !strings.HasPrefix(repo.Spec.URL, sourcev1.OCIRepositoryPrefix) {
		problems = append(problems, "spec.url must start with "+sourcev1.OCIRepositoryPrefix)
	}
	if repo.Spec.Reference == nil || (repo.Spec.Reference.Tag == "" && repo.Spec.Reference.SemVer == "" && repo.Spec.Reference.Digest == "") {
		problems = append(problems, "spec.ref pins nothing: Flux pulls latest")
	}
	if sel := repo.Spec.LayerSelector; sel != nil && !oneOf(sel.Operation, "", sourcev1.OCILayerExtract, sourcev1.OCILayerCopy) {
		problems = append(problems, "unknown spec.layerSelector.operation "+sel.Operation)
	}
	return problems
}

func bufioReader(data []byte) *bufio.Reader {
	return bufio.NewReader(bytes.NewReader(data))
}

func isFlux(apiVersion string) bool {
	group, _, _ := strings.Cut(apiVersion, "/")
	for _, g := range fluxGroups {
		if group == g {
			return true
		}
	}
	return false
}

func validateFile(path string) (int, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, nil, err
	}
	reader := utilyaml.NewYAMLReader(bufioReader(data))
	checked := 0
	var problems []string
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return checked, problems, nil
		}
		if err != nil {
			return checked, problems, err
		}
		var h header
		if err := yaml.Unmarshal(doc, &h); err != nil || !isFlux(h.APIVersion) {
			continue
		}
		checked++
		run, known := checks[h.APIVersion+"/"+h.Kind]
		if !known {
			problems = append(problems, fmt.Sprintf("%s: %s %s: %s is not served by these Flux APIs", path, h.Kind, h.Metadata.Name, h.APIVersion))
			continue
		}
		for _, problem := range run(doc) {
			problems = append(problems, fmt.Sprintf("%s: %s %s: %s", path, h.Kind, h.Metadata.Name, problem))
		}
	}
}

func main() {
	checked := 0
	failed := false
	for _, path := range os.Args[1:] {
		n, problems, err := validateFile(path)
		if err != nil {
			fmt.Printf("%s: %v\n", path, err)
			failed = true
		}
		for _, problem := range problems {
			fmt.Println(problem)
			failed = true
		}
		checked += n
	}
	if failed {
		os.Exit(1)
	}
	out, _ := json.Marshal(map[string]int{"checked": checked})
	fmt.Println(string(out))
}
