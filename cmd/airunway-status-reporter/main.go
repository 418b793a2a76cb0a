// Command airunway-status-reporter writes the health of the provider
// objects airunway-render produced back into ModelDeployment.status; see
// package reporter.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/airunway-render/airunway-render/internal/version"
	"github.com/airunway-render/airunway-render/reporter"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet("airunway-status-reporter", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var o reporter.Options
	kubeconfig := fs.String("kubeconfig", "", "path to a kubeconfig; default: in-cluster, else $KUBECONFIG, else ~/.kube/config")
	fs.StringSliceVar(&o.Namespaces, "namespace", nil, "watch only these namespaces (repeat or comma-separate); default: all")
	fs.StringVar(&o.MetricsAddr, "metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint; \"0\" disables it")
	fs.StringVar(&o.ProbeAddr, "health-probe-bind-address", ":8081", "address of /healthz and /readyz; \"0\" disables them")
	fs.BoolVar(&o.LeaderElection, "leader-elect", true, "elect one active replica through a Lease")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", "", "namespace of the Lease; default: the pod's namespace")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", reporter.DefaultLeaderElectionID, "name of the Lease")
	fs.DurationVar(&o.DiscoveryInterval, "discovery-interval", reporter.DefaultDiscoveryInterval, "how often to re-check which provider kinds the cluster serves")
	fs.DurationVar(&o.StaleAfter, "stale-after", reporter.StaleAfter, "how long a not-ready provider object may go without an update before Ready is Unknown")
	fs.IntVar(&o.Workers, "workers", reporter.DefaultWorkers, "ModelDeployments reconciled at once")
	fs.DurationVar(&o.SyncPeriod, "sync-period", reporter.DefaultSyncPeriod, "how often every ModelDeployment is re-checked without an event")
	fs.StringVar(&o.Conversion.Addr, "conversion-bind-address", ":9443", "HTTPS address of the ModelDeployment conversion webhook ("+reporter.ConversionPath+"); \"0\" disables it")
	fs.StringVar(&o.Conversion.CertDir, "conversion-cert-dir", "", "serve tls.crt and tls.key from this directory (cert-manager); default: keep a certificate in a Secret and write its CA into the CRD")
	fs.StringVar(&o.Conversion.Secret.Name, "conversion-secret", reporter.DefaultConversionSecret, "the Secret, in the pod's namespace, holding the webhook's own certificate")
	fs.BoolVar(&o.Conversion.EnableHTTP2, "enable-http2", false, "let clients speak HTTP/2 to the conversion webhook; off, it speaks HTTP/1.1 only, as kubebuilder's webhooks since the HTTP/2 Rapid Reset advisories (CVE-2023-44487, CVE-2023-39325)")
	fs.StringSliceVar(&o.Conversion.Hosts, "conversion-hosts", nil, "DNS names or IP addresses the webhook's own certificate is for; default: those of Service airunway-status-reporter in the pod's namespace")
	verbosity := fs.IntP("v", "v", 0, "log verbosity")
	printVersion := fs.Bool("version", false, "print the version and exit")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if o.Workers < 1 {
		fmt.Fprintf(stderr, "airunway-status-reporter: `--workers` must be at least 1, got %d\n", o.Workers)
		return 2
	}
	if *printVersion {
		fmt.Fprintln(stdout, "airunway-status-reporter", version.String())
		return 0
	}
	o.Logger = textlogger.NewLogger(textlogger.NewConfig(textlogger.Verbosity(*verbosity), textlogger.Output(stderr)))
	ctrl.SetLogger(o.Logger)
	klog.SetLogger(o.Logger) // client-go's reflectors log through klog

	if err := leaderElectionOutOfCluster(&o, fs.Changed("leader-elect")); err != nil {
		fmt.Fprintf(stderr, "airunway-status-reporter: %v\n", err)
		return 2
	}
	if err := conversionOutOfCluster(&o, fs.Changed("conversion-bind-address")); err != nil {
		fmt.Fprintf(stderr, "airunway-status-reporter: %v\n", err)
		return 2
	}
	cfg, err := restConfig(*kubeconfig)
	if err != nil {
		fmt.Fprintf(stderr, "airunway-status-reporter: %v\n", err)
		return 1
	}
	rep, err := reporter.New(cfg, o)
	if err != nil {
		fmt.Fprintf(stderr, "airunway-status-reporter: %v\n", err)
		return 1
	}
	if err := rep.Start(ctx); err != nil {
		fmt.Fprintf(stderr, "airunway-status-reporter: %v\n", err)
		return 1
	}
	return 0
}

// serviceAccountNamespace is where a pod finds its namespace, which
// controller-runtime takes as the Lease's namespace by default.
var serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderElectionOutOfCluster settles leader election when the reporter runs
// outside a cluster (a laptop, a CI job with only --kubeconfig): there is
// no pod namespace for the Lease. Unless --leader-elect was asked for
// explicitly, election is switched off, with a log line: one replica out of
// cluster needs none. Asked for explicitly, it is an error naming the flag
// that is missing.
func leaderElectionOutOfCluster(o *reporter.Options, explicit bool) error {
	if !o.LeaderElection || o.LeaderElectionNamespace != "" {
		return nil
	}
	if _, err := os.Stat(serviceAccountNamespace); err == nil {
		return nil // in a pod: controller-runtime reads the namespace
	}
	if explicit {
		return fmt.Errorf("`--leader-elect` needs a namespace for its Lease, and outside a cluster there is no pod namespace to default to: pass `--leader-election-namespace NAMESPACE`")
	}
	o.LeaderElection = false
	o.Logger.Info("leader election is off: not running in a pod and no `--leader-election-namespace` given; run a single replica, or pass `--leader-election-namespace NAMESPACE` to elect one through a Lease")
	return nil
}

// conversionOutOfCluster settles the conversion webhook's namespace: its
// Secret lives in the pod's namespace (or the Lease's, when that is
// given). Outside a cluster there is none, and no Service could reach the
// webhook anyway: unless --conversion-bind-address was asked for
// explicitly the webhook is switched off, with a log line; asked for, it
// needs --conversion-cert-dir or --leader-election-namespace.
func conversionOutOfCluster(o *reporter.Options, explicit bool) error {
	c := &o.Conversion
	if c.Addr == "0" {
		c.Addr = ""
	}
	if c.Addr == "" || c.CertDir != "" {
		return nil
	}
	c.Secret.Namespace = o.LeaderElectionNamespace
	if ns, err := os.ReadFile(serviceAccountNamespace); err == nil && c.Secret.Namespace == "" {
		c.Secret.Namespace = strings.TrimSpace(string(ns))
	}
	if c.Secret.Namespace != "" {
		return nil
	}
	if explicit {
		return fmt.Errorf("`--conversion-bind-address` needs a namespace for the webhook's Secret, and outside a cluster there is no pod namespace to default to: pass `--leader-election-namespace NAMESPACE` or `--conversion-cert-dir DIR`")
	}
	c.Addr = ""
	o.Logger.Info("the conversion webhook is off: not running in a pod; pass `--conversion-bind-address` with `--conversion-cert-dir DIR` to serve it")
	return nil
}

func restConfig(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		return ctrl.GetConfig()
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	if cfg.QPS == 0 {
		// As ctrl.GetConfig does for the other paths: the API server's
		// priority and fairness limits the rate, not client-go's default
		// of 5 requests a second (a burst of 1,000 status changes would
		// take 200 s to write).
		cfg.QPS = -1
	}
	return cfg, nil
}
