package web

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/compose-spec/compose-go/v2/loader"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

// loadCompose parses ../docker-compose.yml with compose-spec's own loader,
// offline and with an empty environment.
func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	details := types.ConfigDetails{WorkingDir: root, Environment: types.Mapping{},
		ConfigFiles: []types.ConfigFile{{Filename: filepath.Join(root, "docker-compose.yml")}}}
	p, err := loader.LoadWithContext(context.Background(), details, func(o *loader.Options) {
		o.SetProjectName("crawlq", true)
		o.SkipResolveEnvironment = true
	})
	if err != nil {
		t.Fatalf("load docker-compose.yml: %v", err)
	}
	return p
}

func TestComposeServices(t *testing.T) {
	p := loadCompose(t)
	if d := cmp.Diff([]string{"grafana", "postgres", "prometheus", "redis", "scheduler", "sink", "web", "worker"}, p.ServiceNames()); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	tests := []struct {
		name    string
		service string
		command []string
	}{
		{name: "redis keeps an append-only file", service: "redis", command: []string{"redis-server", "--appendonly", "yes"}},
		{name: "worker serves metrics", service: "worker", command: []string{"crawlq", "worker", "--metrics-addr", ":9100"}},
		{name: "scheduler runs the schedules", service: "scheduler", command: []string{"crawlq", "scheduler"}},
		{name: "sink drains results into postgres", service: "sink", command: []string{"crawlq", "sink", "--metrics-addr", ":9101"}},
		{name: "web listens for the cluster", service: "web",
			command: []string{"crawlq", "web", "--listen", "0.0.0.0:8080", "--insecure-no-auth", "--prometheus", "http://prometheus:9090"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := p.GetService(tt.service)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.command, []string(s.Command)); d != "" {
				t.Errorf("%s command (-want +got):\n%s", tt.service, d)
			}
		})
	}
}

// TestComposePublishesWebOnLoopback: the dashboard serves without auth in
// its container (--insecure-no-auth), so the host publishes it on
// 127.0.0.1 only.
func TestComposePublishesWebOnLoopback(t *testing.T) {
	p := loadCompose(t)
	web, err := p.GetService("web")
	if err != nil {
		t.Fatal(err)
	}
	if len(web.Ports) == 0 {
		t.Fatal("web publishes no port")
	}
	for _, port := range web.Ports {
		if port.HostIP != "127.0.0.1" {
			t.Errorf("web port %s published on host IP %q, want 127.0.0.1 only", port.Published, port.HostIP)
		}
	}
}

func TestComposeWorkerReplicasAndRedis(t *testing.T) {
	p := loadCompose(t)
	worker, err := p.GetService("worker")
	if err != nil {
		t.Fatal(err)
	}
	if worker.Deploy == nil || worker.Deploy.Replicas == nil || *worker.Deploy.Replicas != 3 {
		t.Errorf("worker deploy = %+v, want replicas 3", worker.Deploy)
	}
	redis, err := p.GetService("redis")
	if err != nil {
		t.Fatal(err)
	}
	if len(redis.Volumes) != 1 || redis.Volumes[0].Type != types.VolumeTypeVolume || redis.Volumes[0].Target != "/data" {
		t.Errorf("redis volumes = %+v, want one named volume on /data", redis.Volumes)
	} else if _, ok := p.Volumes[redis.Volumes[0].Source]; !ok {
		t.Errorf("redis volume %q is not declared under volumes", redis.Volumes[0].Source)
	}
	crawlers := 0
	for name, s := range p.Services {
		if len(s.Command) == 0 || s.Command[0] != "crawlq" {
			continue
		}
		crawlers++
		url := s.Environment["CRAWLQ_REDIS"]
		if url == nil || *url != "redis://redis:6379/0" {
			t.Errorf("%s CRAWLQ_REDIS = %v, want redis://redis:6379/0 (the redis service)", name, url)
		}
		if _, ok := s.DependsOn["redis"]; !ok {
			t.Errorf("%s does not depend on redis", name)
		}
	}
	if crawlers != 4 {
		t.Errorf("%d services run crawlq, want 4 (worker, scheduler, web, sink)", crawlers)
	}
}

// TestComposePrometheusConfig checks that Prometheus mounts the config in
// the repo and scrapes the web and worker ports the commands listen on.
func TestComposePrometheusConfig(t *testing.T) {
	p := loadCompose(t)
	prom, err := p.GetService("prometheus")
	if err != nil {
		t.Fatal(err)
	}
	var src string
	for _, v := range prom.Volumes {
		if v.Target == "/etc/prometheus/prometheus.yml" {
			src = v.Source
		}
	}
	if want, _ := filepath.Abs("prometheus.yml"); src != want {
		t.Fatalf("prometheus config mounted from %q, want %q", src, want)
	}
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []struct {
			Job    string `yaml:"job_name"`
			Static []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
			DNS []struct {
				Names []string `yaml:"names"`
				Port  int      `yaml:"port"`
			} `yaml:"dns_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("parse %s: %v", src, err)
	}
	var targets []string
	for _, sc := range cfg.ScrapeConfigs {
		for _, s := range sc.Static {
			targets = append(targets, s.Targets...)
		}
		for _, d := range sc.DNS {
			for _, n := range d.Names {
				targets = append(targets, n+":"+strconv.Itoa(d.Port))
			}
		}
	}
	if d := cmp.Diff([]string{"web:8080", "worker:9100", "sink:9101"}, targets); d != "" {
		t.Errorf("scrape targets (-want +got):\n%s", d)
	}
}
