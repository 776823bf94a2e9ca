// Command nvidia-config runs NVIDIA's own configuration parsing for the cluster tier's fake
// kubelet, so that the fake node agents accept, reject and default exactly what the real ones do.
//
//	nvidia-config device-plugin [--config-file FILE]   (flags and env vars as the device plugin)
//	nvidia-config mig-parted --config-file FILE [--selected NAME]
//	nvidia-config config-manager [--node-label-value VALUE]  (CONFIG_FILE_SRCDIR, DEFAULT_CONFIG, ...)
//
// device-plugin prints the device plugin's v1.Config as JSON on stdout; mig-parted prints the
// selected mig-config entry (a list of {devices, mig-enabled, mig-devices}) as JSON;
// config-manager prints, as a JSON string, the file of its folder that the device plugin's
// config-manager picks for a node label's value ("" for the empty config). On a parse
// or validation error the upstream error text goes to stderr and the exit status is 1.
//
// Only the parts that need no GPU are run: NVML, device discovery and the kubelet connection are
// left out. Everything else is upstream's code, imported from the Go module proxy; the few lines
// that live in upstream's package main (and so cannot be imported) are copied below, each with
// the file and version it comes from.
//
// Versions (go.mod): k8s-device-plugin v0.19.3, the newest the Go module proxy serves (v0.20.0
// is refused); mig-parted v0.14.4, the newest whose module zip it serves (v0.15.0 lists but its
// zip is refused; api/spec/v1 and assert.go's parsing are the same in both). Build with cgo:
// mig-parted's pkg/types imports github.com/NVIDIA/go-nvml, which does not compile without it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
	"k8s.io/klog/v2"
	"sigs.k8s.io/yaml"

	spec "github.com/NVIDIA/k8s-device-plugin/api/config/v1"
	migspec "github.com/NVIDIA/mig-parted/api/spec/v1"
)

// kubeletSocketDefault is pluginapi.KubeletSocket from k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1,
// written out so as not to pull in the kubelet's gRPC API for one string that is not config.
const kubeletSocketDefault = "/var/lib/kubelet/device-plugins/kubelet.sock"

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: nvidia-config device-plugin [--config-file FILE] | mig-parted --config-file FILE [--selected NAME] | config-manager [--node-label-value VALUE]")
		os.Exit(2)
	}
	// Upstream's warnings and info lines (klog) would come before the error on stderr; the
	// caller wants the error alone.
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)

	var err error
	switch os.Args[1] {
	case "device-plugin":
		err = devicePlugin(os.Args[1:])
	case "mig-parted":
		err = migParted(os.Args[2:])
	case "config-manager":
		err = configManager(os.Args[1:])
	default:
		err = fmt.Errorf("unknown subcommand %q: want device-plugin, mig-parted or config-manager", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// devicePlugin builds the device plugin's configuration as its binary does at startup.
//
// The flag list is copied verbatim (names, aliases, defaults, env vars) from
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go
// (func main), so that a value from the environment, a flag and the config file take precedence
// as upstream's NewConfig/UpdateFromCLIFlags decide. Only the Usage strings are shortened.
func devicePlugin(args []string) error {
	var kubeletSocket, configFile string
	var cdiFeatureFlags cli.StringSlice
	var config *spec.Config

	c := cli.NewApp()
	c.Name = "nvidia-config device-plugin"
	c.Usage = "print the NVIDIA device plugin's configuration as JSON"
	c.HideVersion = true
	c.Writer = os.Stderr // stdout carries the JSON only
	c.ErrWriter = os.Stderr
	// Upstream prints "Incorrect Usage" and the whole help before the error; the error alone
	// (which main prints) is what the caller needs.
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return err }
	c.Flags = []cli.Flag{
		&cli.StringFlag{
			Name:    "mig-strategy",
			Value:   spec.MigStrategyNone,
			Usage:   "[none | single | mixed]",
			EnvVars: []string{"MIG_STRATEGY"},
		},
		&cli.BoolFlag{
			Name:    "fail-on-init-error",
			Value:   true,
			EnvVars: []string{"FAIL_ON_INIT_ERROR"},
		},
		&cli.StringFlag{
			Name:    "driver-root",
			Aliases: []string{"nvidia-driver-root"},
			Value:   "/",
			EnvVars: []string{"NVIDIA_DRIVER_ROOT"},
		},
		&cli.StringFlag{
			Name:    "dev-root",
			Aliases: []string{"nvidia-dev-root"},
			EnvVars: []string{"NVIDIA_DEV_ROOT"},
		},
		&cli.BoolFlag{
			Name:    "pass-device-specs",
			Value:   false,
			EnvVars: []string{"PASS_DEVICE_SPECS"},
		},
		&cli.StringSliceFlag{
			Name:    "device-list-strategy",
			Value:   cli.NewStringSlice(string(spec.DeviceListStrategyEnvVar)),
			Usage:   "[envvar | volume-mounts | cdi-annotations]",
			EnvVars: []string{"DEVICE_LIST_STRATEGY"},
		},
		&cli.StringFlag{
			Name:    "device-id-strategy",
			Value:   spec.DeviceIDStrategyUUID,
			Usage:   "[uuid | index]",
			EnvVars: []string{"DEVICE_ID_STRATEGY"},
		},
		&cli.BoolFlag{
			Name:    "gdrcopy-enabled",
			EnvVars: []string{"GDRCOPY_ENABLED"},
		},
		&cli.BoolFlag{
			Name:    "gds-enabled",
			EnvVars: []string{"GDS_ENABLED"},
		},
		&cli.BoolFlag{
			Name:    "mofed-enabled",
			EnvVars: []string{"MOFED_ENABLED"},
		},
		&cli.StringFlag{
			Name:    "cdi-annotation-prefix",
			Value:   spec.DefaultCDIAnnotationPrefix,
			EnvVars: []string{"CDI_ANNOTATION_PREFIX"},
		},
		&cli.StringFlag{
			Name:    "nvidia-cdi-hook-path",
			Aliases: []string{"nvidia-ctk-path"},
			Value:   spec.DefaultNvidiaCTKPath,
			EnvVars: []string{"NVIDIA_CDI_HOOK_PATH", "NVIDIA_CTK_PATH"},
		},
		&cli.StringFlag{
			Name:    "driver-root-ctr-path",
			Aliases: []string{"container-driver-root"},
			Value:   spec.DefaultContainerDriverRoot,
			EnvVars: []string{"DRIVER_ROOT_CTR_PATH", "CONTAINER_DRIVER_ROOT"},
		},
		&cli.StringFlag{
			Name:    "mps-root",
			EnvVars: []string{"MPS_ROOT"},
		},
		&cli.StringFlag{
			Name:    "device-discovery-strategy",
			Value:   "auto",
			Usage:   "'auto', 'nvml', or 'tegra'",
			EnvVars: []string{"DEVICE_DISCOVERY_STRATEGY"},
		},
		&cli.IntSliceFlag{
			Name:    "imex-channel-ids",
			EnvVars: []string{"IMEX_CHANNEL_IDS"},
		},
		&cli.BoolFlag{
			Name:    "imex-required",
			EnvVars: []string{"IMEX_REQUIRED"},
		},
		// The following CLI flags do not have equivalents in the config file.
		&cli.StringFlag{
			Name:        "kubelet-socket",
			Value:       kubeletSocketDefault,
			Destination: &kubeletSocket,
			EnvVars:     []string{"KUBELET_SOCKET"},
		},
		&cli.StringFlag{
			Name:        "config-file",
			Usage:       "the path to a config file as an alternative to command line options or environment variables",
			Destination: &configFile,
			EnvVars:     []string{"CONFIG_FILE"},
		},
		&cli.StringSliceFlag{
			Name:        "cdi-feature-flags",
			EnvVars:     []string{"CDI_FEATURE_FLAGS"},
			Destination: &cdiFeatureFlags,
		},
	}
	c.Action = func(ctx *cli.Context) error {
		var err error
		config, err = startPlugins(ctx, c.Flags)
		if err != nil {
			// upstream's start(): return fmt.Errorf("error starting plugins: %v", err)
			return fmt.Errorf("error starting plugins: %v", err)
		}
		return nil
	}
	if err := c.Run(args); err != nil {
		return err
	}
	if config == nil { // --help
		return nil
	}
	out, err := json.Marshal(config)
	if err != nil {
		return fmt.Errorf("failed to marshal config to JSON: %v", err)
	}
	fmt.Println(string(out))
	return nil
}

// startPlugins is upstream's startPlugins up to the "Running with config" log line, less what
// needs a GPU. https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go
func startPlugins(c *cli.Context, flags []cli.Flag) (*spec.Config, error) {
	config, err := loadConfig(c, flags)
	if err != nil {
		return nil, fmt.Errorf("unable to load config: %v", err)
	}
	spec.DisableResourceNamingInConfig(config)

	// Upstream validates with an NVML-backed info library; the fake nodes are NVML nodes.
	if err := validateFlags(true, config); err != nil {
		return nil, fmt.Errorf("unable to validate flags: %v", err)
	}

	if err := addDefaultResourcesToConfig(config); err != nil {
		return nil, fmt.Errorf("unable to add default resources to config: %v", err)
	}
	return config, nil
}

// loadConfig is copied from
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go
func loadConfig(c *cli.Context, flags []cli.Flag) (*spec.Config, error) {
	config, err := spec.NewConfig(c, flags)
	if err != nil {
		return nil, fmt.Errorf("unable to finalize config: %v", err)
	}
	config.Flags.GFD = nil
	return config, nil
}

// validateFlags is copied from
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/nvidia-device-plugin/main.go;
// upstream asks infolib.HasNvml(), here the caller says.
func validateFlags(hasNvml bool, config *spec.Config) error {
	deviceListStrategies, err := spec.NewDeviceListStrategies(*config.Flags.Plugin.DeviceListStrategy)
	if err != nil {
		return fmt.Errorf("invalid --device-list-strategy option: %v", err)
	}

	if deviceListStrategies.AnyCDIEnabled() && !hasNvml {
		return fmt.Errorf("CDI --device-list-strategy options are only supported on NVML-based systems")
	}

	if *config.Flags.Plugin.DeviceIDStrategy != spec.DeviceIDStrategyUUID && *config.Flags.Plugin.DeviceIDStrategy != spec.DeviceIDStrategyIndex {
		return fmt.Errorf("invalid --device-id-strategy option: %v", *config.Flags.Plugin.DeviceIDStrategy)
	}

	if config.Sharing.SharingStrategy() == spec.SharingStrategyMPS {
		if *config.Flags.MigStrategy == spec.MigStrategyMixed {
			return fmt.Errorf("using --mig-strategy=mixed is not supported with MPS")
		}
		if config.Flags.MpsRoot == nil || *config.Flags.MpsRoot == "" {
			return fmt.Errorf("using MPS requires --mps-root to be specified")
		}
	}

	switch *config.Flags.DeviceDiscoveryStrategy {
	case "auto":
	case "nvml":
	case "tegra":
	default:
		return fmt.Errorf("invalid --device-discovery-strategy option %v", *config.Flags.DeviceDiscoveryStrategy)
	}

	switch *config.Flags.MigStrategy {
	case spec.MigStrategyNone:
	case spec.MigStrategySingle:
	case spec.MigStrategyMixed:
	default:
		return fmt.Errorf("unknown MIG strategy: %v", *config.Flags.MigStrategy)
	}

	if err := spec.AssertChannelIDsValid(config.Imex.ChannelIDs); err != nil {
		return fmt.Errorf("invalid IMEX channel IDs: %w", err)
	}

	return nil
}

// addDefaultResourcesToConfig is the GPU-independent part of AddDefaultResourcesToConfig in
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/internal/rm/rm.go (an internal
// package). For mig-strategy=mixed upstream adds one resource per MIG profile that NVML
// reports (nvidia.com/mig-<profile>); with no NVML here those are left out, as upstream itself
// does when NVML is missing.
func addDefaultResourcesToConfig(config *spec.Config) error {
	_ = config.Resources.AddGPUResource("*", "gpu")
	if config.Flags.MigStrategy == nil {
		return nil
	}
	if *config.Flags.MigStrategy == spec.MigStrategySingle {
		return config.Resources.AddMIGResource("*", "gpu")
	}
	return nil
}

// migParted parses a mig-parted config file with mig-parted's own v1.Spec and prints the
// selected entry. The flags are those of `nvidia-mig-parted assert|apply` (-f/--config-file,
// -c/--selected-config, also spelt --selected here), and the steps and messages are those of
// ParseConfigFile, GetSelectedMigConfig and assertWrapper in
// https://github.com/NVIDIA/mig-parted/blob/v0.14.4/cmd/nvidia-mig-parted/assert/assert.go,
// capitalised as mig-parted's main does (util.Capitalize before log.Fatal).
func migParted(args []string) error {
	fs := flag.NewFlagSet("nvidia-config mig-parted", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var configFile, selected string
	for _, name := range []string{"config-file", "f"} {
		fs.StringVar(&configFile, name, "", "path to the mig-parted configuration file")
	}
	for _, name := range []string{"selected", "selected-config", "c"} {
		fs.StringVar(&selected, name, "", "the mig-config to print")
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if configFile == "" {
		return errors.New("Missing required flags 'config-file'")
	}

	migSpec, err := parseMigConfigFile(configFile)
	if err != nil {
		return capitalize(fmt.Errorf("error parsing config file: %v", err))
	}
	migConfig, err := getSelectedMigConfig(selected, migSpec)
	if err != nil {
		return capitalize(fmt.Errorf("error selecting MIG config: %v", err))
	}
	out, err := json.Marshal(migConfig)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// parseMigConfigFile is ParseConfigFile from mig-parted's assert.go (v0.14.4), less stdin.
func parseMigConfigFile(configFile string) (*migspec.Spec, error) {
	configYaml, err := os.ReadFile(configFile)
	if err != nil {
		return nil, fmt.Errorf("read error: %v", err)
	}
	var s migspec.Spec
	if err := yaml.Unmarshal(configYaml, &s); err != nil {
		return nil, fmt.Errorf("unmarshal error: %v", err)
	}
	return &s, nil
}

// getSelectedMigConfig is GetSelectedMigConfig from mig-parted's assert.go (v0.14.4).
func getSelectedMigConfig(selected string, s *migspec.Spec) (migspec.MigConfigSpecSlice, error) {
	if len(s.MigConfigs) > 1 && selected == "" {
		return nil, fmt.Errorf("missing required flag 'selected-config' when more than one config available")
	}
	if len(s.MigConfigs) == 1 && selected == "" {
		for c := range s.MigConfigs {
			selected = c
		}
	}
	if _, exists := s.MigConfigs[selected]; !exists {
		return nil, fmt.Errorf("selected mig-config not present: %v", selected)
	}
	return s.MigConfigs[selected], nil
}

// capitalize is mig-parted's util.Capitalize applied to an error's text.
func capitalize(err error) error {
	text := err.Error()
	if text == "" {
		return err
	}
	return errors.New(strings.ToUpper(text[:1]) + text[1:])
}

// Copied from https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
// (package main, so not importable): the fallback strategies, the config name they fall back
// to, and the part of Flags that choosing a config reads.
const (
	FallbackStrategyNamedConfig  = "named"
	FallbackStrategySingleConfig = "single"
	FallbackStrategyEmptyConfig  = "empty"
)

const NamedConfigFallback = "default"

type Flags struct {
	ConfigFileSrcdir   string
	DefaultConfig      string
	FallbackStrategies cli.StringSlice
}

// configManager picks the config file as the device plugin's config-manager does when the node
// label (nvidia.com/device-plugin.config) has the value --node-label-value ("" or absent: no
// label). The flags and env vars are upstream's (config-file-srcdir, default-config,
// fallback-strategies); the label's value replaces upstream's watch of the Node object.
func configManager(args []string) error {
	f := Flags{}
	var label string
	c := cli.NewApp()
	c.Name = "nvidia-config config-manager"
	c.Usage = "print the config file name that config-manager selects, as JSON"
	c.HideVersion = true
	c.Writer = os.Stderr
	c.ErrWriter = os.Stderr
	c.OnUsageError = func(_ *cli.Context, err error, _ bool) error { return err }
	c.Flags = []cli.Flag{
		&cli.StringFlag{
			Name:        "node-label-value",
			Usage:       "the value of the node's config label (not an upstream flag)",
			Destination: &label,
		},
		&cli.StringFlag{
			Name:        "config-file-srcdir",
			Value:       "",
			Usage:       "the path to the directory containing available device configuration files",
			Destination: &f.ConfigFileSrcdir,
			EnvVars:     []string{"CONFIG_FILE_SRCDIR"},
		},
		&cli.StringFlag{
			Name:        "default-config",
			Value:       "",
			Usage:       "the default config to use if no label is set",
			Destination: &f.DefaultConfig,
			EnvVars:     []string{"DEFAULT_CONFIG"},
		},
		&cli.StringSliceFlag{
			Name:        "fallback-strategies",
			Usage:       "ordered list of fallback strategies to use to set a default config when none is provided",
			Destination: &f.FallbackStrategies,
			EnvVars:     []string{"FALLBACK_STRATEGIES"},
		},
	}
	selected := (*string)(nil)
	c.Action = func(_ *cli.Context) error {
		if f.ConfigFileSrcdir == "" { // upstream's validateFlags
			return fmt.Errorf("invalid <config-file-srcdir>: must not be empty string")
		}
		config, err := updateConfigName(label, &f)
		if err != nil {
			return err
		}
		selected = &config
		return nil
	}
	if err := c.Run(args); err != nil {
		return err
	}
	if selected == nil { // --help
		return nil
	}
	out, err := json.Marshal(*selected)
	if err != nil {
		return err
	}
	fmt.Println(string(out))
	return nil
}

// updateConfigName is copied verbatim from
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
// (note upstream's message for a missing DEFAULT_CONFIG prints the empty label, not the default).
func updateConfigName(config string, f *Flags) (string, error) {
	// Get a lists of the available config file names
	files, err := getConfigFileNameMap(f)
	if err != nil {
		return "", fmt.Errorf("error getting list of configuration files: %v", err)
	}

	if len(files) == 0 {
		return "", fmt.Errorf("no configuration files available")
	}

	filenames := make([]string, 0, len(files))
	for f := range files {
		filenames = append(filenames, f)
	}

	// If an explicit config was passed in, check to see if it is available.
	if config != "" {
		if !files[config] {
			return "", fmt.Errorf("specified config %v does not exist", config)
		}
		return config, nil
	}

	// Otherwise, if an explicit default is set, check to see if it is available.
	if f.DefaultConfig != "" {
		klog.Infof("No value set. Selecting default name: %v", f.DefaultConfig)
		if !files[f.DefaultConfig] {
			return "", fmt.Errorf("specified config %v does not exist", config)
		}
		return f.DefaultConfig, nil
	}

	// Otherwise, if no explicit default is set, step through the configured fallbacks.
	klog.Infof("No value set and no default set. Attempting fallback strategies: %v", f.FallbackStrategies.Value())
	for _, fallback := range f.FallbackStrategies.Value() {
		switch fallback {
		case FallbackStrategyNamedConfig:
			klog.Infof("Attempting to find config named: %v", NamedConfigFallback)
			if files[NamedConfigFallback] {
				return NamedConfigFallback, nil
			}
			klog.Infof("No configuration named '%v' was found", NamedConfigFallback)
		case FallbackStrategySingleConfig:
			klog.Infof("Attempting to see if only a single config is available...")
			if len(filenames) == 1 {
				return filenames[0], nil
			}
			klog.Infof("More than one configuration was found: %v", filenames)
		case FallbackStrategyEmptyConfig:
			klog.Infof("Falling back to an empty configuration")
			return "", nil
		default:
			return "", fmt.Errorf("unknown fallback strategy: %v", fallback)
		}
	}

	return "", fmt.Errorf("no config was set, no default was provided, and all fallbacks failed")
}

// getConfigFileNameMap is copied verbatim from
// https://github.com/NVIDIA/k8s-device-plugin/blob/v0.19.3/cmd/config-manager/main.go
func getConfigFileNameMap(f *Flags) (map[string]bool, error) {
	files, err := os.ReadDir(f.ConfigFileSrcdir)
	if err != nil {
		return nil, fmt.Errorf("error reading directory: %v", err)
	}

	filemap := make(map[string]bool)
	for _, f := range files {
		// ConfigMaps mounted as volumes have special files with the prefix
		// "..". We want to explicitly exclude these as well as any directories.
		if !f.IsDir() && !strings.HasPrefix(f.Name(), "..") {
			filemap[f.Name()] = true
		}
	}

	return filemap, nil
}
