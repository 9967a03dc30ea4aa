#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""packaging/kubernetes/ against itself, packaging/nginx/replhost.conf and nginx.

The manifests must parse, and what refers to what must agree: names, labels and selectors,
ports, the volumes and the paths the server is given, the ConfigMap's nginx configuration (the
shipped file, and the StatefulSet's pods by their stable names), and nginx must accept that
configuration (`nginx -t`). Nothing here needs a cluster.
"""

import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

SOURCE = os.environ.get("REPLHOST_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
KUBERNETES = os.path.join(SOURCE, "packaging", "kubernetes")
NGINX_CONF = os.path.join(SOURCE, "packaging", "nginx", "replhost.conf")


def load(name):
    with open(os.path.join(KUBERNETES, name), encoding="utf-8") as file:
        return [document for document in yaml.safe_load_all(file) if document]


def flag(arguments, name):
    """The values of --name=value and --name value in a container's args."""
    values = []
    for i, argument in enumerate(arguments):
        if argument.startswith(f"--{name}="):
            values.append(argument.split("=", 1)[1])
        elif argument == f"--{name}" and i + 1 < len(arguments):
            values.append(arguments[i + 1])
    return values


class KubernetesManifests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.kustomization = load("kustomization.yaml")[0]
        cls.objects = [document for resource in cls.kustomization["resources"] for document in load(resource)]
        cls.by_kind = {}
        for document in cls.objects:
            cls.by_kind.setdefault(document["kind"], []).append(document)
        cls.namespace = cls.one("Namespace")["metadata"]["name"]
        cls.statefulset = cls.one("StatefulSet")
        cls.server_pod = cls.statefulset["spec"]["template"]["spec"]
        cls.server = cls.server_pod["containers"][0]
        cls.router = cls.one("Deployment")
        cls.config = cls.one("ConfigMap")
        with open(NGINX_CONF, encoding="utf-8") as file:
            cls.shipped = file.read()

    @classmethod
    def one(cls, kind):
        found = cls.by_kind.get(kind, [])
        assert len(found) == 1, f"{len(found)} objects of kind {kind}"
        return found[0]

    def service_named(self, name):
        services = [s for s in self.by_kind["Service"] if s["metadata"]["name"] == name]
        self.assertEqual(len(services), 1, f"Service {name}")
        return services[0]

    def server_port(self):
        ports = {p["name"]: p["containerPort"] for p in self.server["ports"]}
        return ports["http"]

    def test_every_manifest_of_the_folder_is_in_the_kustomization(self):
        files = sorted(f for f in os.listdir(KUBERNETES) if f.endswith(".yaml") and f != "kustomization.yaml")
        self.assertEqual(files, sorted(self.kustomization["resources"]))

    def test_every_object_is_in_the_namespace(self):
        for document in self.objects:
            if document["kind"] != "Namespace":
                self.assertEqual(document["metadata"].get("namespace"), self.namespace,
                                 f'{document["kind"]} {document["metadata"]["name"]}')

    def test_selectors_select_their_own_pods(self):
        for workload in (self.statefulset, self.router):
            selector = workload["spec"]["selector"]["matchLabels"]
            labels = workload["spec"]["template"]["metadata"]["labels"]
            self.assertLessEqual(selector.items(), labels.items(), workload["metadata"]["name"])
        for service in self.by_kind["Service"]:
            selected = [w for w in (self.statefulset, self.router)
                        if service["spec"]["selector"].items() <= w["spec"]["template"]["metadata"]["labels"].items()]
            self.assertEqual(len(selected), 1, f'Service {service["metadata"]["name"]} selects {len(selected)} workloads')

    def test_the_statefulset_is_governed_by_a_headless_service_of_its_port(self):
        service = self.service_named(self.statefulset["spec"]["serviceName"])
        self.assertEqual(service["spec"]["clusterIP"], "None")
        self.assertTrue(service["spec"].get("publishNotReadyAddresses"))
        self.assertEqual(service["spec"]["selector"], self.statefulset["spec"]["selector"]["matchLabels"])
        self.assertEqual([p["targetPort"] for p in service["spec"]["ports"]], ["http"])
        self.assertEqual(flag(self.server["args"], "port"), [str(self.server_port())])

    def test_each_instance_keeps_its_data_on_a_claim_of_its_own(self):
        claims = {c["metadata"]["name"] for c in self.statefulset["spec"]["volumeClaimTemplates"]}
        mounts = {m["name"]: m["mountPath"] for m in self.server["volumeMounts"]}
        [data_dir] = flag(self.server["args"], "data-dir")
        self.assertIn(data_dir, [mounts[name] for name in claims if name in mounts])

    def test_the_token_comes_from_the_secret(self):
        secret = self.one("Secret")
        [token_file] = flag(self.server["args"], "token-file")
        volumes = {v["name"]: v for v in self.server_pod["volumes"]}
        mount = next(m for m in self.server["volumeMounts"] if token_file.startswith(m["mountPath"] + "/"))
        self.assertTrue(mount.get("readOnly"))
        self.assertEqual(volumes[mount["name"]]["secret"]["secretName"], secret["metadata"]["name"])
        key = token_file[len(mount["mountPath"]) + 1:]
        self.assertIn(key, {**secret.get("stringData", {}), **secret.get("data", {})})

    def test_the_instance_id_is_the_pods_name(self):
        self.assertEqual(flag(self.server["args"], "instance-id"), ["$(POD_NAME)"])
        env = {e["name"]: e for e in self.server["env"]}
        self.assertEqual(env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"], "metadata.name")

    def test_readiness_is_healthz_and_resources_are_requested(self):
        for probe in ("readinessProbe", "livenessProbe"):
            self.assertEqual(self.server[probe]["httpGet"], {"path": "/healthz", "port": "http"})
        self.assertIn("cpu", self.server["resources"]["requests"])
        self.assertIn("memory", self.server["resources"]["requests"])
        for container in self.router["spec"]["template"]["spec"]["containers"]:
            self.assertIn("requests", container["resources"])

    def test_sandbox_isolation_is_on_for_every_workspace(self):
        [defaults] = flag(self.server["args"], "workspace-defaults")
        self.assertEqual(json.loads(defaults)["isolation"], "sandbox")

    def test_the_servers_accept_the_host_the_router_sends(self):
        upstream = re.search(r"^upstream (\S+) \{", self.shipped, re.MULTILINE).group(1)
        self.assertIn("proxy_set_header Host $proxy_host;", self.shipped)
        self.assertIn(upstream, flag(self.server["args"], "allow-host"))

    def test_the_servers_body_limit_is_the_routers(self):
        limit = re.search(r"client_max_body_size (\d+)m;", self.shipped).group(1)
        self.assertEqual(flag(self.server["args"], "max-body"), [f"{limit}M"])

    def test_the_configmap_holds_the_shipped_nginx_configuration(self):
        self.assertEqual(self.config["data"]["replhost.conf"], self.shipped)

    def test_the_ring_lists_every_pod_by_its_stable_name(self):
        service = self.statefulset["spec"]["serviceName"]
        name = self.statefulset["metadata"]["name"]
        expected = [f"server {name}-{i}.{service}.{self.namespace}.svc.cluster.local:{self.server_port()} max_fails=0;"
                    for i in range(self.statefulset["spec"]["replicas"])]
        self.assertEqual(self.config["data"]["replhost.instances"].splitlines(), expected)

    def test_the_router_mounts_the_configmap_where_nginx_includes_it(self):
        pod = self.router["spec"]["template"]["spec"]
        volume = next(v for v in pod["volumes"] if v.get("configMap", {}).get("name") == self.config["metadata"]["name"])
        [container] = pod["containers"]
        mount = next(m for m in container["volumeMounts"] if m["name"] == volume["name"])
        self.assertEqual(mount["mountPath"], "/etc/nginx/conf.d")
        self.assertIn("include conf.d/replhost.instances;", self.shipped)
        self.assertEqual(container["command"][-1], "/etc/nginx/conf.d/watch-instances.sh")
        self.assertIn("watch-instances.sh", self.config["data"])
        listen = re.search(r"^\s*listen (\d+);", self.shipped, re.MULTILINE).group(1)
        self.assertEqual([p["containerPort"] for p in container["ports"]], [int(listen)])
        router_service = self.service_named(self.router["metadata"]["name"])
        self.assertEqual([p["targetPort"] for p in router_service["spec"]["ports"]], ["http"])

    def test_nginx_accepts_the_configmaps_configuration(self):
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.assertTrue(os.access(nginx, os.X_OK), "nginx is not installed (scripts/packages.txt has it)")
        with tempfile.TemporaryDirectory() as prefix:
            os.makedirs(os.path.join(prefix, "conf.d"))
            with open(os.path.join(prefix, "conf.d", "replhost.conf"), "w", encoding="utf-8") as file:
                file.write(self.config["data"]["replhost.conf"])
            # The pods' names resolve only in the cluster: the same lines with a local address.
            instances = re.sub(r"server [^:\s]+:", "server 127.0.0.1:", self.config["data"]["replhost.instances"])
            with open(os.path.join(prefix, "conf.d", "replhost.instances"), "w", encoding="utf-8") as file:
                file.write(instances)
            with open(os.path.join(prefix, "nginx.conf"), "w", encoding="utf-8") as file:
                file.write(f"pid {prefix}/nginx.pid;\nevents {{}}\nhttp {{\n"
                           f"  client_body_temp_path {prefix}/body;\n  proxy_temp_path {prefix}/proxy;\n"
                           f"  fastcgi_temp_path {prefix}/fastcgi;\n  uwsgi_temp_path {prefix}/uwsgi;\n"
                           f"  scgi_temp_path {prefix}/scgi;\n  include conf.d/*.conf;\n}}\n")
            checked = subprocess.run([nginx, "-e", "stderr", "-p", prefix + "/", "-c", os.path.join(prefix, "nginx.conf"), "-t"],
                                     capture_output=True, text=True, check=False)
            self.assertEqual(checked.returncode, 0, checked.stderr)

    def test_rebalance_is_a_program(self):
        self.assertTrue(os.access(os.path.join(KUBERNETES, "rebalance"), os.X_OK))


if __name__ == "__main__":
    unittest.main(verbosity=2)
