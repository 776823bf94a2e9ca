// Command validate checks a rendered stack's Talos files with Talos's own code.
//
// First whether the Talos release runs the Kubernetes version at all (the machinery's
// compatibility tables: KubernetesVersion.SupportedWith).
// For each machine-config patch under <stack>/talos/ it generates a machine config of the role
// the patch is for (pools/*.patch.yaml: worker; controlplane.patch.yaml: control plane) with the
// Talos machinery library (pkg/machinery/config/generate), for the given Talos release and
// Kubernetes version, loads the patch as talosctl does (configpatcher.LoadPatches), applies it
// (configpatcher.Apply) and validates the result for a metal node (Validate, strict: warnings
// count as errors). Each Image Factory schematic (pools/*.schematic.yaml) is decoded with the
// Image Factory's own model (image-factory/pkg/schematic.Unmarshal, which rejects unknown fields).
//
// It prints one JSON object per file (what the patched config carries, or the errors) and exits
// 1 when any file fails, 2 on bad arguments.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/siderolabs/image-factory/pkg/schematic"
	machineapi "github.com/siderolabs/talos/pkg/machinery/api/machine"
	"github.com/siderolabs/talos/pkg/machinery/compatibility"
	"github.com/siderolabs/talos/pkg/machinery/config"
	"github.com/siderolabs/talos/pkg/machinery/config/configpatcher"
	"github.com/siderolabs/talos/pkg/machinery/config/generate"
	"github.com/siderolabs/talos/pkg/machinery/config/machine"
	"github.com/siderolabs/talos/pkg/machinery/config/types/v1alpha1"
	"github.com/siderolabs/talos/pkg/machinery/config/validation"
)

// metal is the runtime mode of a node installed on a disk (what Validate checks against).
type metal struct{}

func (metal) String() string        { return "metal" }
func (metal) RequiresInstall() bool { return true }
func (metal) InContainer() bool     { return false }

// result is what the test reads back, per file.
type result struct {
	File        string            `json:"file"`
	Kind        string            `json:"kind"`
	Errors      []string          `json:"errors"`
	Modules     []string          `json:"modules,omitempty"`
	Sysctls     map[string]string `json:"sysctls,omitempty"`
	NodeLabels  map[string]string `json:"nodeLabels,omitempty"`
	NodeTaints  map[string]string `json:"nodeTaints,omitempty"`
	Files       []string          `json:"files,omitempty"`
	FeatureArgs map[string]string `json:"featureGateArgs,omitempty"`
	Kubelet     map[string]any    `json:"kubeletExtraConfig,omitempty"`
	PodSubnets  []string          `json:"podSubnets,omitempty"`
	CNI         string            `json:"cni,omitempty"`
	Extensions  []string          `json:"extensions,omitempty"`
}

func main() {
	talos := flag.String("talos", "", "Talos release the configs are for, e.g. v1.13.0")
	kubernetes := flag.String("kubernetes", "", "Kubernetes version, e.g. 1.36.0")
	flag.Parse()
	if *talos == "" || *kubernetes == "" || flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: validate -talos vX.Y.Z -kubernetes X.Y.Z STACK_FOLDER")
		os.Exit(2)
	}
	contract, err := config.ParseContractFromVersion(*talos)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	input, err := generate.NewInput("gpustack", "https://api.example.invalid:6443", *kubernetes,
		generate.WithVersionContract(contract), generate.WithInstallDisk("/dev/sda")) // talosctl gen config's default
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var results []result
	if err := supported(*talos, *kubernetes); err != nil {
		results = append(results, result{File: *talos, Kind: "compatibility", Errors: []string{err.Error()}})
	}
	folder := filepath.Join(flag.Arg(0), "talos")
	patches, _ := filepath.Glob(filepath.Join(folder, "pools", "*.patch.yaml"))
	schematics, _ := filepath.Glob(filepath.Join(folder, "pools", "*.schematic.yaml"))
	for _, path := range patches {
		results = append(results, checkPatch(input, machine.TypeWorker, path))
	}
	if _, err := os.Stat(filepath.Join(folder, "controlplane.patch.yaml")); err == nil {
		results = append(results, checkPatch(input, machine.TypeControlPlane, filepath.Join(folder, "controlplane.patch.yaml")))
	}
	for _, path := range schematics {
		results = append(results, checkSchematic(path))
	}
	failed := false
	encoder := json.NewEncoder(os.Stdout)
	for _, r := range results {
		failed = failed || len(r.Errors) > 0
		_ = encoder.Encode(r)
	}
	if failed {
		os.Exit(1)
	}
}

func checkPatch(input *generate.Input, role machine.Type, path string) result {
	r := result{File: path, Kind: role.String(), Errors: []string{}}
	fail := func(err error) result { r.Errors = append(r.Errors, err.Error()); return r }
	generated, err := input.Config(role)
	if err != nil {
		return fail(err)
	}
	loaded, err := configpatcher.LoadPatches([]string{"@" + path})
	if err != nil {
		return fail(err)
	}
	applied, err := configpatcher.Apply(configpatcher.WithConfig(generated), loaded)
	if err != nil {
		return fail(err)
	}
	cfg, err := applied.Config()
	if err != nil {
		return fail(err)
	}
	warnings, err := cfg.Validate(metal{}, validation.WithStrict())
	for _, w := range warnings {
		r.Errors = append(r.Errors, "warning: "+w)
	}
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	raw := cfg.RawV1Alpha1()
	if raw.MachineConfig.MachineKernel != nil {
		for _, module := range raw.MachineConfig.MachineKernel.KernelModules {
			r.Modules = append(r.Modules, module.ModuleName)
		}
	}
	r.Sysctls = raw.MachineConfig.MachineSysctls
	r.NodeLabels = raw.MachineConfig.MachineNodeLabels
	r.NodeTaints = raw.MachineConfig.MachineNodeTaints
	for _, file := range raw.MachineConfig.MachineFiles {
		r.Files = append(r.Files, file.FilePath+"\n"+file.FileContent)
	}
	if raw.MachineConfig.MachineKubelet != nil {
		r.Kubelet = raw.MachineConfig.MachineKubelet.KubeletExtraConfig.Object
	}
	r.FeatureArgs = featureGateArgs(raw.ClusterConfig)
	if raw.ClusterConfig != nil && raw.ClusterConfig.ClusterNetwork != nil {
		r.PodSubnets = raw.ClusterConfig.ClusterNetwork.PodSubnet
	}
	// The CNI Talos deploys at bootstrap, its default (flannel) filled in.
	r.CNI = cfg.Cluster().Network().CNI().Name()
	return r
}

func checkSchematic(path string) result {
	r := result{File: path, Kind: "schematic", Errors: []string{}}
	data, err := os.ReadFile(path)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	parsed, err := schematic.Unmarshal(data)
	if err != nil {
		r.Errors = append(r.Errors, err.Error())
		return r
	}
	if _, err := parsed.ID(); err != nil {
		r.Errors = append(r.Errors, err.Error())
	}
	r.Extensions = parsed.Customization.SystemExtensions.OfficialExtensions
	return r
}

// featureGateArgs is each control-plane component's --feature-gates argument, by component.
func featureGateArgs(cluster *v1alpha1.ClusterConfig) map[string]string {
	if cluster == nil {
		return nil
	}
	found := map[string]string{}
	sections := map[string]v1alpha1.Args{}
	if cluster.APIServerConfig != nil {
		sections["apiserver"] = cluster.APIServerConfig.ExtraArgsConfig
	}
	if cluster.ControllerManagerConfig != nil {
		sections["controller-manager"] = cluster.ControllerManagerConfig.ExtraArgsConfig
	}
	if cluster.SchedulerConfig != nil {
		sections["scheduler"] = cluster.SchedulerConfig.ExtraArgsConfig
	}
	for component, args := range sections {
		if values, ok := args.ToMap()["feature-gates"]; ok {
			sort.Strings(values)
			found[component] = strings.Join(values, ",")
		}
	}
	return found
}

// supported is the machinery's verdict on running Kubernetes `kubernetes` on Talos `talos`.
func supported(talos, kubernetes string) error {
	talosVersion, err := compatibility.ParseTalosVersion(&machineapi.VersionInfo{Tag: talos})
	if err != nil {
		return err
	}
	kubernetesVersion, err := compatibility.ParseKubernetesVersion(kubernetes)
	if err != nil {
		return err
	}
	return kubernetesVersion.SupportedWith(talosVersion)
}
