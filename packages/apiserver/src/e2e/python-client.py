"""The official Kubernetes Python client, unchanged, against svc-apiserver (--naming=kubernetes).

Run by python-client.int.test.ts with Debian's /usr/bin/python3 and python3-kubernetes:

    python-client.py KUBECONFIG NAMESPACE SCENARIO

Each scenario drives the client as an application would and prints one JSON document of what
it saw on stdout; the test asserts on it. An ApiException is printed as {"error": {...}}.
"""

import json
import sys
import threading

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def config_map(name, data, labels=None):
    return client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name, labels=labels), data=data)


def namespace(v1, ns):
    """Creates the namespace and reads it back."""
    created = v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)))
    read = v1.read_namespace(ns)
    return {"created": created.metadata.name, "phase": read.status.phase, "uid": read.metadata.uid}


def watch_config_maps(v1, ns):
    """watch.Watch().stream(list_namespaced_config_map): ADDED, MODIFIED, DELETED of one ConfigMap.

    The watch starts at the resourceVersion of a list, so a second thread's writes are seen
    whatever the timing; the stream ends at the DELETED event (w.stop()).
    """
    rv = v1.list_namespaced_config_map(ns, label_selector="watched=yes").metadata.resource_version
    name = "watched"
    w = watch.Watch()
    failures = []

    def writes():
        try:
            v1.create_namespaced_config_map(ns, config_map(name, {"step": "1"}, {"watched": "yes"}))
            v1.patch_namespaced_config_map(name, ns, {"data": {"step": "2"}})
            v1.delete_namespaced_config_map(name, ns)
        except ApiException as e:  # reported, not raised, from the thread
            failures.append(error_of(e))

    stream = w.stream(
        v1.list_namespaced_config_map,
        ns,
        label_selector="watched=yes",
        resource_version=rv,
        timeout_seconds=30,
    )
    writer = threading.Thread(target=writes)
    writer.start()
    events = []
    for event in stream:
        obj = event["object"]
        events.append(
            {
                "type": event["type"],
                "class": type(obj).__name__,
                "name": obj.metadata.name,
                "data": obj.data,
                "resourceVersion": obj.metadata.resource_version,
            }
        )
        if event["type"] == "DELETED":
            w.stop()
    writer.join(30)
    return {"events": events, "listResourceVersion": rv, "writerFailures": failures}


def chunked_list(v1, ns):
    """Seven ConfigMaps listed three at a time with limit and _continue.

    They live in a namespace of their own and the list has no selector: Kubernetes sets
    remainingItemCount only for lists without one.
    """
    own = ns + "-chunks"
    v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=own)))
    for i in range(7):
        v1.create_namespaced_config_map(own, config_map("page-%d" % i, {"i": str(i)}))
    pages = []
    token = None
    while True:
        kwargs = {"limit": 3}
        if token:
            kwargs["_continue"] = token
        page = v1.list_namespaced_config_map(own, **kwargs)
        pages.append(
            {
                "names": [item.metadata.name for item in page.items],
                "continue": page.metadata._continue,
                "remainingItemCount": page.metadata.remaining_item_count,
                "resourceVersion": page.metadata.resource_version,
            }
        )
        token = page.metadata._continue
        if not token or len(pages) > 10:
            break
    whole = v1.list_namespaced_config_map(own)
    selected = v1.list_namespaced_config_map(own, label_selector="absent!=x", limit=3)
    return {
        "pages": pages,
        "whole": [item.metadata.name for item in whole.items],
        "selectedRemaining": selected.metadata.remaining_item_count,
        "selectedContinue": bool(selected.metadata._continue),
    }


def dry_run(v1, ns):
    """dry_run='All' on create, patch and delete: answers as if done, stores nothing."""
    created = v1.create_namespaced_config_map(ns, config_map("dry", {"a": "1"}), dry_run="All")
    out = {"created": {"name": created.metadata.name, "uid": created.metadata.uid, "data": created.data}}
    try:
        v1.read_namespaced_config_map("dry", ns)
        out["readAfterCreate"] = "found"
    except ApiException as e:
        out["readAfterCreate"] = e.status
    v1.create_namespaced_config_map(ns, config_map("kept", {"a": "1"}))
    patched = v1.patch_namespaced_config_map("kept", ns, {"data": {"a": "2"}}, dry_run="All")
    out["patched"] = patched.data
    v1.delete_namespaced_config_map("kept", ns, dry_run="All")
    out["kept"] = v1.read_namespaced_config_map("kept", ns).data
    return out


def error_of(e):
    body = None
    try:
        body = json.loads(e.body) if e.body else None
    except ValueError:
        body = e.body
    return {"status": e.status, "reason": e.reason, "body": body}


SCENARIOS = {
    "namespace": namespace,
    "watch": watch_config_maps,
    "chunked-list": chunked_list,
    "dry-run": dry_run,
}


def main():
    kubeconfig, ns, scenario = sys.argv[1:4]
    config.load_kube_config(config_file=kubeconfig)
    v1 = client.CoreV1Api()
    try:
        result = SCENARIOS[scenario](v1, ns)
    except ApiException as e:
        result = {"error": error_of(e)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
