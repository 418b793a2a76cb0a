package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/klog/v2/textlogger"

	"github.com/airunway-render/airunway-render/reporter"
)

// TestWorkersMustBePositive: a reporter with no worker would reconcile
// nothing; the flag is refused before anything connects.
func TestWorkersMustBePositive(t *testing.T) {
	for _, v := range []string{"0", "-3"} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"--workers", v}, &stdout, &stderr); code != 2 {
			t.Errorf("--workers %s: exit %d, want 2", v, code)
		}
		if want := "`--workers` must be at least 1, got " + v; !strings.Contains(stderr.String(), want) {
			t.Errorf("--workers %s: stderr %q lacks %q", v, stderr.String(), want)
		}
	}
}

// TestEnableHTTP2Flag: the conversion webhook's HTTP/2 is a flag, off by
// default.
func TestEnableHTTP2Flag(t *testing.T) {
	var stdout, stderr bytes.Buffer
	run(context.Background(), []string{"--help"}, &stdout, &stderr)
	if want := "--enable-http2"; !strings.Contains(stderr.String(), want) || strings.Contains(stderr.String(), "--enable-http2   (default true)") {
		t.Errorf("usage %q lacks %q, off by default", stderr.String(), want)
	}
}

// Out of cluster there is no pod namespace for the Lease: election is off
// by default (one replica), and an explicit --leader-elect names the flag
// it needs. TestRunsOutOfClusterWithOnlyKubeconfig (package reporter) runs
// the binary so.
func TestLeaderElectionOutOfCluster(t *testing.T) {
	serviceAccountNamespace = filepath.Join(t.TempDir(), "namespace") // no such file: not in a pod
	var logs bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logs)))

	o := reporter.Options{LeaderElection: true, Logger: logger}
	if err := leaderElectionOutOfCluster(&o, false); err != nil || o.LeaderElection {
		t.Fatalf("default: err %v, election %t; want it off", err, o.LeaderElection)
	}
	if !strings.Contains(logs.String(), "leader election is off") {
		t.Errorf("no log line says election is off: %q", logs.String())
	}

	o = reporter.Options{LeaderElection: true, Logger: logger}
	err := leaderElectionOutOfCluster(&o, true)
	if err == nil || !strings.Contains(err.Error(), "`--leader-election-namespace NAMESPACE`") {
		t.Errorf("explicit --leader-elect out of cluster: err %v, want one naming --leader-election-namespace", err)
	}

	o = reporter.Options{LeaderElection: true, LeaderElectionNamespace: "ops", Logger: logger}
	if err := leaderElectionOutOfCluster(&o, true); err != nil || !o.LeaderElection {
		t.Errorf("with a namespace: err %v, election %t; want it on", err, o.LeaderElection)
	}

	ns := filepath.Join(t.TempDir(), "namespace")
	if err := os.WriteFile(ns, []byte("airunway-system"), 0o644); err != nil {
		t.Fatal(err)
	}
	serviceAccountNamespace = ns
	o = reporter.Options{LeaderElection: true, Logger: logger}
	if err := leaderElectionOutOfCluster(&o, false); err != nil || !o.LeaderElection {
		t.Errorf("in a pod: err %v, election %t; want it on", err, o.LeaderElection)
	}
}

// The conversion webhook's Secret lives in the pod's namespace: out of a
// cluster the webhook is off by default, and an explicit address needs a
// namespace or a certificate directory; "0" turns it off.
func TestConversionOutOfCluster(t *testing.T) {
	serviceAccountNamespace = filepath.Join(t.TempDir(), "namespace") // not in a pod
	var logs bytes.Buffer
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(&logs)))

	o := reporter.Options{Logger: logger, Conversion: reporter.ConversionOptions{Addr: ":9443"}}
	if err := conversionOutOfCluster(&o, false); err != nil || o.Conversion.Addr != "" || !strings.Contains(logs.String(), "conversion webhook is off") {
		t.Errorf("default: err %v, address %q, logs %q; want it off, said so", err, o.Conversion.Addr, logs.String())
	}
	o = reporter.Options{Logger: logger, Conversion: reporter.ConversionOptions{Addr: ":9443"}}
	if err := conversionOutOfCluster(&o, true); err == nil || !strings.Contains(err.Error(), "`--conversion-cert-dir DIR`") {
		t.Errorf("explicit: err %v, want one naming the flags it needs", err)
	}
	o = reporter.Options{Logger: logger, LeaderElectionNamespace: "ops", Conversion: reporter.ConversionOptions{Addr: ":9443"}}
	if err := conversionOutOfCluster(&o, true); err != nil || o.Conversion.Secret.Namespace != "ops" {
		t.Errorf("with the Lease's namespace: err %v, Secret namespace %q", err, o.Conversion.Secret.Namespace)
	}
	o = reporter.Options{Logger: logger, Conversion: reporter.ConversionOptions{Addr: "0"}}
	if err := conversionOutOfCluster(&o, true); err != nil || o.Conversion.Addr != "" {
		t.Errorf("\"0\": err %v, address %q; want it off", err, o.Conversion.Addr)
	}

	if err := os.WriteFile(serviceAccountNamespace, []byte("airunway-system\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o = reporter.Options{Logger: logger, Conversion: reporter.ConversionOptions{Addr: ":9443"}}
	if err := conversionOutOfCluster(&o, false); err != nil || o.Conversion.Secret.Namespace != "airunway-system" || o.Conversion.Addr != ":9443" {
		t.Errorf("in a pod: err %v, %+v; want the pod's namespace", err, o.Conversion)
	}
}
