// Package twin starts a cluster twin for tests: a real control plane
// (etcd and kube-apiserver from envtest, kube-controller-manager,
// kube-scheduler) with KWOK's fake kubelets, so that rendered objects go
// through the same controllers and scheduler as in a cluster and land on
// Nodes generated from a capability file. Nothing runs in the pods; KWOK
// marks them Running and Ready.
//
// Every address is on loopback: the API server, node addresses
// (capabilities.NodeAddress) and pod addresses (KWOK's --cidr inside
// 127.0.0.0/8); the components serve no endpoint of their own. No component dials a pod or a
// Service: there is no kube-proxy, and the controllers that would (none of
// the workload controllers) are not run.
//
// A test process may run several twins, a fleet of clusters: StartWith
// gives each its own etcd, kube-apiserver, controller-manager, scheduler
// and KWOK, and FleetOptions its own loopback ranges for Service and pod
// addresses (127.64.0.0/16 and 127.128.0.0/16 are Start's; fleet member i
// gets 127.(65+i).0.0/16 and 127.(129+i).0.0/16), so that no address of
// one twin is also one of another's.
//
// GPUs of a pool the capability file declares as DRA devices are devices
// of ResourceSlices (capabilities.Resolved.ResourceSlices, with its
// DeviceClasses) that the tests publish beside the Nodes, as a DRA
// driver's kubelet plugin would: the resource-claim controller makes each
// pod's ResourceClaim from its template, the real scheduler allocates it
// and binds the pod, and KWOK runs the pod without preparing any device
// (there is no kubelet, so no driver is called).
//
// The binaries come from hack/install-envtest.sh (KUBEBUILDER_ASSETS) and
// hack/install-twin.sh (TWIN_ASSETS: kube-scheduler,
// kube-controller-manager, kwok and KWOK's own stage definitions, the
// KubeRay operator and the Gateway API and Inference Extension CRDs).
package twin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	sigsyaml "sigs.k8s.io/yaml"
)

// Controllers are the kube-controller-manager controllers the twin runs:
// the workload controllers that turn Deployments, StatefulSets and Jobs
// into pods, garbage collection, namespace deletion, the ServiceAccount
// controller whose `default` account every namespace's pods need, and the
// node lifecycle controller, which lifts the not-ready taint the API server
// puts on every new Node once KWOK reports it Ready (and would taint it
// again, were KWOK's heartbeats to stop), and the HorizontalPodAutoscaler
// controller, which scales the autoscaled models' Deployments through their
// scale subresource (the twin serves no metrics, so it only keeps them
// within their bounds), and the resource-claim controller, which makes
// each pod's ResourceClaim from the ResourceClaimTemplate it names (the
// GPUs of a DRA pool), removes it with the pod and releases a claim whose
// pod is gone; the scheduler's DynamicResources plugin allocates the claims
// (Start verifies it is on: checkDRA). None of them dials anything but the API
// server.
var Controllers = []string{
	"deployment-controller", "replicaset-controller", "statefulset-controller", "job-controller",
	"garbage-collector-controller", "serviceaccount-controller", "namespace-controller",
	"node-lifecycle-controller", "horizontal-pod-autoscaler-controller",
	"resourceclaim-controller",
}

// HangBound is how long a test waits for the twin's controllers, operators
// and GitOps engines before it calls the wait hung. It is a bound on hangs,
// not a measure of speed: a wait ends as soon as its condition holds, so
// a long bound costs nothing when the test passes. The twin's tests used
// to wait one, two or three minutes, each picked by hand; a loaded machine
// slows every chain of controllers, so they now share one generous bound.
const HangBound = 5 * time.Minute

// PodCIDR is where KWOK allocates pod addresses: loopback.
const PodCIDR = "127.128.0.0/16"

// ServiceCIDR is the API server's range of Service addresses: loopback.
const ServiceCIDR = "127.64.0.0/16"

// Options name a twin and its address ranges; Start uses the zero value.
type Options struct {
	// Name names the twin in its kubeconfig, temporary directory and
	// errors; "twin" when empty.
	Name string
	// ServiceCIDR and PodCIDR are the twin's loopback ranges for Service
	// and pod addresses; ServiceCIDR and PodCIDR when empty.
	ServiceCIDR, PodCIDR string
	// BeforeControllers, when set, runs once the API server serves and
	// before the controller-manager starts: what a cluster holds before
	// its controllers run, such as CRDs. The garbage collector discovers
	// the kinds it tracks when it starts and then only every 30 seconds,
	// so a CRD created after it waits that long for a foreground deletion
	// (Argo CD's default for a prune).
	BeforeControllers func(*Twin) error
}

// FleetOptions are the options of the i-th twin of a fleet (i from 0 to
// 62): its name, and address ranges of its own inside 127.0.0.0/8, apart
// from Start's and from every other member's.
func FleetOptions(i int, name string) Options {
	return Options{
		Name:        name,
		ServiceCIDR: fmt.Sprintf("127.%d.0.0/16", 65+i),
		PodCIDR:     fmt.Sprintf("127.%d.0.0/16", 129+i),
	}
}

// Twin is a running cluster twin.
type Twin struct {
	Config     *rest.Config
	Client     client.Client
	Kubeconfig string // an admin kubeconfig file for processes
	// Name is Options.Name ("twin" for Start's).
	Name  string
	opts  Options
	env   *envtest.Environment
	dir   string
	procs []*process
}

type process struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{} // closed when the process has exited
}

// stop interrupts the process and waits until it has exited, killing it
// after 10 seconds.
func (p *process) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start starts the twin. The caller must Stop it.
func Start() (*Twin, error) { return StartWith(Options{}) }

// StartWith starts a twin with the options' name and address ranges. The
// caller must Stop it.
func StartWith(o Options) (*Twin, error) {
	assets := os.Getenv("TWIN_ASSETS")
	if os.Getenv("KUBEBUILDER_ASSETS") == "" || assets == "" {
		return nil, errors.New("KUBEBUILDER_ASSETS and TWIN_ASSETS must be set: run `make twin` (it builds kube-apiserver, etcd, kube-scheduler, kube-controller-manager and kwok once)")
	}
	if o.Name == "" {
		o.Name = "twin"
	}
	if o.ServiceCIDR == "" {
		o.ServiceCIDR = ServiceCIDR
	}
	if o.PodCIDR == "" {
		o.PodCIDR = PodCIDR
	}
	for _, cidr := range []string{o.ServiceCIDR, o.PodCIDR} {
		if _, n, err := net.ParseCIDR(cidr); err != nil || !n.IP.IsLoopback() {
			return nil, fmt.Errorf("twin %s: %q is not a loopback range", o.Name, cidr)
		}
	}
	dir, err := os.MkdirTemp("", "airunway-"+o.Name+"-")
	if err != nil {
		return nil, err
	}
	t := &Twin{Name: o.Name, opts: o, dir: dir}
	// kube-apiserver and etcd may take long to start on a loaded machine
	// (envtest's default is 20 s, which a busy CI runner exceeds): the
	// bound only catches one that never starts.
	t.env = &envtest.Environment{ControlPlaneStartTimeout: 3 * time.Minute, ControlPlaneStopTimeout: time.Minute}
	t.env.ControlPlane.GetAPIServer().Configure().Set("service-cluster-ip-range", o.ServiceCIDR)
	cfg, err := t.env.Start()
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("twin %s: starting kube-apiserver and etcd: %w", o.Name, err)
	}
	t.Config = cfg
	if t.Client, err = client.New(cfg, client.Options{}); err != nil {
		return nil, t.stopWith(err)
	}
	if t.Kubeconfig, err = writeKubeconfig(cfg, o.Name, filepath.Join(dir, "kubeconfig")); err != nil {
		return nil, t.stopWith(err)
	}
	if o.BeforeControllers != nil {
		if err := o.BeforeControllers(t); err != nil {
			return nil, t.stopWith(err)
		}
	}
	starts := []func(string) error{t.checkDRA, t.startControllerManager, t.startScheduler, t.startKWOK}
	for _, start := range starts {
		if err := start(assets); err != nil {
			return nil, t.stopWith(err)
		}
	}
	return t, nil
}

// DRA is what Dynamic Resource Allocation needs of the twin: the API
// server serves resource.k8s.io/v1 (GA in 1.34, on by default), and the
// scheduler runs the DynamicResources plugin (the DynamicResourceAllocation
// feature gate is locked on since 1.35).
const (
	DRAGroupVersion = "resource.k8s.io/v1"
	DRAPlugin       = "DynamicResources"
)

// checkDRA verifies, rather than assumes, that the twin's Kubernetes
// release does DRA: discovery lists DeviceClasses, ResourceSlices,
// ResourceClaims and ResourceClaimTemplates in resource.k8s.io/v1, and the
// configuration the scheduler binary runs with (--write-config-to, which
// writes it and exits without scheduling) enables the DynamicResources
// plugin in its profile.
func (t *Twin) checkDRA(assets string) error {
	disco, err := discovery.NewDiscoveryClientForConfig(t.Config)
	if err != nil {
		return err
	}
	list, err := disco.ServerResourcesForGroupVersion(DRAGroupVersion)
	if err != nil {
		return fmt.Errorf("the API server does not serve %s, which the DRA tests need: %w", DRAGroupVersion, err)
	}
	served := map[string]bool{}
	for _, r := range list.APIResources {
		served[r.Name] = true
	}
	for _, r := range []string{"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"} {
		if !served[r] {
			return fmt.Errorf("the API server does not serve %s in %s", r, DRAGroupVersion)
		}
	}
	config := filepath.Join(t.dir, "kube-scheduler-config.yaml")
	// It would listen before it writes the file, on 0.0.0.0:10259 by
	// default, which another twin's check (a fleet starts its twins at
	// once) or another test process may hold: --secure-port 0 serves
	// nothing.
	out, err := exec.Command(filepath.Join(assets, "kube-scheduler"), "--kubeconfig", t.Kubeconfig, "--write-config-to", config,
		"--secure-port", "0").CombinedOutput()
	if err != nil {
		return fmt.Errorf("kube-scheduler --write-config-to: %w\n%s", err, out)
	}
	data, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	var cfg struct {
		Profiles []struct {
			SchedulerName string `json:"schedulerName"`
			Plugins       struct {
				MultiPoint struct {
					Enabled []struct{ Name string } `json:"enabled"`
				} `json:"multiPoint"`
			} `json:"plugins"`
		} `json:"profiles"`
	}
	if err := sigsyaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("reading the scheduler's configuration: %w", err)
	}
	for _, p := range cfg.Profiles {
		if p.SchedulerName != corev1.DefaultSchedulerName {
			continue
		}
		for _, plugin := range p.Plugins.MultiPoint.Enabled {
			if plugin.Name == DRAPlugin {
				return nil
			}
		}
	}
	return fmt.Errorf("the scheduler's %s profile does not enable the %s plugin:\n%s", corev1.DefaultSchedulerName, DRAPlugin, data)
}

// The components serve nothing: nothing reads their health or metrics
// endpoints (--secure-port 0 turns the controller-manager's and the
// scheduler's off), nor KWOK's kubelet API (served only with
// --server-address), and a port picked for them in advance could be
// taken before they bind it.

func (t *Twin) startControllerManager(assets string) error {
	return t.run("kube-controller-manager", filepath.Join(assets, "kube-controller-manager"),
		"--kubeconfig", t.Kubeconfig,
		"--controllers", strings.Join(Controllers, ","),
		"--leader-elect=false", "--use-service-account-credentials=false",
		"--secure-port", "0",
		"--concurrent-deployment-syncs", "10", "--concurrent-replicaset-syncs", "10")
}

func (t *Twin) startScheduler(assets string) error {
	return t.run("kube-scheduler", filepath.Join(assets, "kube-scheduler"),
		"--kubeconfig", t.Kubeconfig, "--leader-elect=false", "--secure-port", "0")
}

func (t *Twin) startKWOK(assets string) error {
	return t.run("kwok", filepath.Join(assets, "kwok"),
		"--kubeconfig", t.Kubeconfig, "--config", filepath.Join(assets, "stages.yaml"),
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake",
		"--cidr", t.opts.PodCIDR, "--node-ip", "127.0.0.1")
}

// StartOperator runs an operator binary against the twin, with the
// twin's admin kubeconfig in KUBECONFIG, until Stop; its log is among
// Logs.
func (t *Twin) StartOperator(name, bin string, args ...string) error {
	return t.runEnv(name, bin, []string{"KUBECONFIG=" + t.Kubeconfig}, args...)
}

// StartProcess runs a program beside the twin until it stops, with env
// added to the test's environment (and KUBECONFIG set to the twin's), its
// output in the twin's logs.
func (t *Twin) StartProcess(name, bin string, env []string, args ...string) error {
	return t.runEnv(name, bin, append([]string{"KUBECONFIG=" + t.Kubeconfig}, env...), args...)
}

// StopProcess stops a program StartOperator or StartProcess started (by
// the name it was given) and waits until it has exited, so that another
// (another release of an operator, say) can take its place; its log stays
// among Logs. It does nothing when no such program runs.
func (t *Twin) StopProcess(name string) {
	for i, p := range t.procs {
		if p.name != name || p.exited() {
			continue
		}
		p.stop()
		t.procs[i].name = name + " (stopped)"
	}
}

// run starts a component, its output in a log file.
func (t *Twin) run(name, bin string, args ...string) error {
	return t.runEnv(name, bin, nil, args...)
}

func (t *Twin) runEnv(name, bin string, env []string, args ...string) error {
	log := filepath.Join(t.dir, name+".log")
	f, err := os.Create(log)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		_ = f.Close()
		close(p.done)
	}()
	t.procs = append(t.procs, p)
	return nil
}

// Logs returns the tail of each component's log, for a failing test.
func (t *Twin) Logs(lines int) string {
	var b strings.Builder
	for _, p := range t.procs {
		fmt.Fprintf(&b, "--- %s (last %d lines)\n%s\n", p.name, lines, p.tail(lines))
	}
	return b.String()
}

// tail is the last lines of the process's log.
func (p *process) tail(lines int) string {
	data, _ := os.ReadFile(p.log)
	all := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

// running is the program started as name that has not been stopped.
func (t *Twin) running(name string) (*process, error) {
	for i := len(t.procs) - 1; i >= 0; i-- {
		if t.procs[i].name == name {
			return t.procs[i], nil
		}
	}
	return nil, fmt.Errorf("%s: no such program runs beside twin %s", name, t.Name)
}

// Stop stops every component and removes the twin's files.
func (t *Twin) Stop() error {
	var errs []error
	for i := len(t.procs) - 1; i >= 0; i-- {
		t.procs[i].stop()
	}
	if t.env != nil {
		errs = append(errs, t.env.Stop())
	}
	if os.Getenv("TWIN_KEEP_LOGS") == "" {
		errs = append(errs, os.RemoveAll(t.dir))
	} else {
		fmt.Fprintf(os.Stderr, "twin: logs kept in %s\n", t.dir)
	}
	return errors.Join(errs...)
}

func (t *Twin) stopWith(err error) error {
	logs := t.Logs(20)
	return errors.Join(err, t.Stop(), errors.New(logs))
}

// Ready waits until the controllers run: the ServiceAccount controller
// has made the `default` namespace's `default` account, which every pod
// needs. It fails early when a component has exited.
func (t *Twin) Ready(ctx context.Context) error {
	for {
		for _, p := range t.procs {
			if p.exited() {
				return fmt.Errorf("%s exited:\n%s", p.name, t.Logs(30))
			}
		}
		sa := &corev1.ServiceAccount{}
		if t.Client.Get(ctx, client.ObjectKey{Namespace: "default", Name: "default"}, sa) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s did not become ready: %w\n%s", t.Name, ctx.Err(), t.Logs(30))
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// KubeconfigBytes is the admin kubeconfig of the twin, its cluster and
// context named after it, every credential inline (no file it names): what
// a GitOps engine's Secret for a remote cluster holds.
func (t *Twin) KubeconfigBytes() ([]byte, error) {
	return clientcmd.Write(*kubeconfig(t.Config, t.Name))
}

func kubeconfig(cfg *rest.Config, name string) *clientcmdapi.Config {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData, Token: cfg.BearerToken}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: "admin"}
	kc.CurrentContext = name
	return kc
}

func writeKubeconfig(cfg *rest.Config, name, path string) (string, error) {
	return path, clientcmd.WriteToFile(*kubeconfig(cfg, name), path)
}

// freePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartFleet starts one twin per name at once (FleetOptions gives each its
// address ranges, before runs as each one's BeforeControllers) and waits
// until each is Ready; on an error it stops those it started. The caller
// must Stop each.
func StartFleet(ctx context.Context, before func(*Twin) error, names ...string) ([]*Twin, error) {
	twins := make([]*Twin, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			o := FleetOptions(i, name)
			o.BeforeControllers = before
			t, err := StartWith(o)
			if err == nil {
				if err = t.Ready(ctx); err != nil {
					err = errors.Join(err, t.Stop())
					t = nil
				}
			}
			twins[i], errs[i] = t, err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for _, t := range twins {
			if t != nil {
				err = errors.Join(err, t.Stop())
			}
		}
		return nil, err
	}
	return twins, nil
}
