/* Interactive layer graph page (zonemark).
 * Reads the node-link JSON embedded in #graph-data and draws it with cytoscape.
 * Every string from the graph is file content and is treated as hostile:
 * it only ever reaches the page through textContent or the canvas. */
(function () {
  'use strict';

  var hook = { ready: false, error: null, cy: null };
  window.zonemarkGraph = hook;

  var KINDS = ['file', 'nucleus', 'module', 'sub_module', 'topic', 'subtopic', 'rules', 'entry', 'other'];
  var KIND_STYLE = {
    file: { label: 'file', shape: 'round-rectangle', colour: '#455a64', width: 40, height: 26 },
    nucleus: { label: 'nucleus', shape: 'star', colour: '#8e24aa', width: 34, height: 34 },
    module: { label: 'module', shape: 'round-rectangle', colour: '#1e88e5', width: 32, height: 24 },
    sub_module: { label: 'sub-module', shape: 'round-rectangle', colour: '#81d4fa', width: 26, height: 20 },
    topic: { label: 'topic', shape: 'ellipse', colour: '#00897b', width: 28, height: 28 },
    subtopic: { label: 'subtopic', shape: 'ellipse', colour: '#80cbc4', width: 22, height: 22 },
    rules: { label: 'rules', shape: 'diamond', colour: '#8d6e63', width: 30, height: 30 },
    entry: { label: 'entry', shape: 'ellipse', colour: '#e0e0e0', width: 14, height: 14 },
    other: { label: 'other', shape: 'hexagon', colour: '#bdbdbd', width: 20, height: 20 }
  };
  /* §5.2 permission levels (memory zones). */
  var PERMISSIONS = [
    { level: 1, name: 'P1 genetic', colour: '#d32f2f' },
    { level: 2, name: 'P2 permanent', colour: '#f57c00' },
    { level: 3, name: 'P3 long-term', colour: '#fbc02d' },
    { level: 4, name: 'P4 short-term', colour: '#43a047' },
    { level: 5, name: 'P5 volatile', colour: '#1e88e5' },
    { level: 0, name: 'none', colour: '#9e9e9e' }
  ];
  var EDGE_STYLE = {
    contains: { colour: '#b0bec5', line: 'solid', width: 1.5 },
    governs: { colour: '#8e24aa', line: 'dashed', width: 1.8 },
    connects: { colour: '#ef6c00', line: 'solid', width: 2.2 },
    other: { colour: '#78909c', line: 'dotted', width: 1.5 }
  };
  var LABEL_LIMIT = 60;
  var LINK_LIST_LIMIT = 200;

  function byId(id) { return document.getElementById(id); }

  function asText(value) {
    if (value === null || value === undefined) { return ''; }
    return typeof value === 'string' ? value : String(value);
  }

  function make(tag, className, text) {
    var element = document.createElement(tag);
    if (className) { element.className = className; }
    if (text !== undefined && text !== null) { element.textContent = asText(text); }
    return element;
  }

  function clear(element) {
    while (element.firstChild) { element.removeChild(element.firstChild); }
  }

  function shorten(text, limit) {
    return text.length > limit ? text.slice(0, limit - 1) + '\u2026' : text;
  }

  function plural(count, word) {
    if (count === 1) { return '1 ' + word; }
    if (/[^aeiou]y$/.test(word)) { return count + ' ' + word.slice(0, -1) + 'ies'; }
    return count + ' ' + word + (/(ch|sh|s|x)$/.test(word) ? 'es' : 's');
  }

  /* ---- model ---------------------------------------------------------- */

  function buildModel(graph) {
    var nodes = Array.isArray(graph.nodes) ? graph.nodes : [];
    var links = Array.isArray(graph.links) ? graph.links : [];
    var meta = graph.graph && typeof graph.graph === 'object' ? graph.graph : {};
    var diagnostics = Array.isArray(meta.diagnostics) ? meta.diagnostics : [];
    var model = {
      meta: meta, nodes: [], nodeIndex: new Map(), elements: [],
      diagnostics: [], skippedNodes: 0, skippedLinks: 0, kindCounts: {},
      trace: readTrace(graph), view: readView(graph)
    };
    nodes.forEach(function (raw) {
      if (!raw || typeof raw !== 'object') { model.skippedNodes += 1; return; }
      var id = asText(raw.id);
      if (id === '' || model.nodeIndex.has(id)) { model.skippedNodes += 1; return; }
      var kind = KIND_STYLE.hasOwnProperty(raw.kind) ? raw.kind : 'other';
      var level = [1, 2, 3, 4, 5].indexOf(raw.permissionLevel) >= 0 ? raw.permissionLevel : 0;
      var internalId = 'n' + model.nodes.length;
      var label = asText(raw.label) || id;
      var folded = model.view.collapsed.hasOwnProperty(id) ? Number(model.view.collapsed[id]) : 0;
      var entry = { raw: raw, id: id, internalId: internalId, kind: kind, level: level, label: label,
                    moduleId: asText(raw.moduleId), diagnostics: [], litItems: [], heat: 0,
                    collapsed: isFinite(folded) && folded > 0 ? Math.floor(folded) : 0 };
      model.nodes.push(entry);
      model.nodeIndex.set(id, entry);
      model.kindCounts[kind] = (model.kindCounts[kind] || 0) + 1;
      var classes = ['kind-' + kind, 'perm-' + level];
      if (raw.state === 'inactive') { classes.push('inactive'); }
      if (raw.permanent === true) { classes.push('permanent'); }
      model.elements.push({
        group: 'nodes',
        data: { id: internalId, label: shorten(label, LABEL_LIMIT) },
        classes: classes.join(' ')
      });
    });
    links.forEach(function (raw, index) {
      var source = raw && model.nodeIndex.get(asText(raw.source));
      var target = raw && model.nodeIndex.get(asText(raw.target));
      if (!source || !target) { model.skippedLinks += 1; return; }
      var kind = EDGE_STYLE.hasOwnProperty(raw.kind) && raw.kind !== 'other' ? raw.kind : 'other';
      model.elements.push({
        group: 'edges',
        data: { id: 'e' + index, source: source.internalId, target: target.internalId, kind: kind },
        classes: 'edge-' + kind
      });
    });
    diagnostics.forEach(function (raw) {
      if (!raw || typeof raw !== 'object') { return; }
      var severity = raw.severity === 'error' ? 'error' : 'warning';
      var node = raw.node === null || raw.node === undefined ? null : model.nodeIndex.get(asText(raw.node)) || null;
      var item = { raw: raw, severity: severity, node: node };
      model.diagnostics.push(item);
      if (node) { node.diagnostics.push(item); }
    });
    return model;
  }

  /* What the review page's frame adds (W86): its own address and the file view's (same-origin
     paths only), a search given from the review page, and the entries collapsed into each node. */
  function readView(graph) {
    var view = graph.view && typeof graph.view === 'object' && !Array.isArray(graph.view) ? graph.view : {};
    var local = function (url) { return typeof url === 'string' && /^\/[^\/\\]/.test(url) ? url : null; };
    var collapsed = view.collapsed && typeof view.collapsed === 'object' ? view.collapsed : {};
    return { frameUrl: local(view.frameUrl), fileUrl: local(view.fileUrl), query: asText(view.query),
             collapsed: collapsed, note: asText(view.note) };
  }

  function withParams(url, params) {
    var parts = Object.keys(params).filter(function (key) { return params[key] !== ''; }).map(function (key) {
      return encodeURIComponent(key) + '=' + encodeURIComponent(params[key]);
    });
    return parts.length ? url + (url.indexOf('?') >= 0 ? '&' : '?') + parts.join('&') : url;
  }

  function diagnosticText(raw) {
    var place = asText(raw.path) + ':' + asText(raw.line) + ':' + asText(raw.column);
    return { place: place, code: asText(raw.code), message: asText(raw.message) };
  }

  /* ---- cytoscape styles ------------------------------------------------ */

  function graphStyle(nodeCount) {
    // Small layers keep every label readable; big ones hide labels until zoomed in.
    var minFont = nodeCount <= 200 ? 0 : 7;
    var style = [
      { selector: 'node', style: {
        'label': 'data(label)', 'font-size': 10, 'color': '#263238',
        'text-valign': 'bottom', 'text-halign': 'center', 'text-margin-y': 3,
        'text-wrap': 'ellipsis', 'text-max-width': 130, 'min-zoomed-font-size': minFont,
        'text-background-color': '#ffffff', 'text-background-opacity': 0.75, 'text-background-padding': 1,
        'border-width': 3, 'border-color': '#9e9e9e'
      } },
      { selector: 'edge', style: {
        'curve-style': 'bezier', 'target-arrow-shape': 'triangle', 'arrow-scale': 0.8
      } }
    ];
    KINDS.forEach(function (kind) {
      var k = KIND_STYLE[kind];
      style.push({ selector: 'node.kind-' + kind, style: {
        'shape': k.shape, 'background-color': k.colour, 'width': k.width, 'height': k.height
      } });
    });
    style.push({ selector: 'node.kind-entry', style: { 'font-size': 8, 'border-width': 2 } });
    PERMISSIONS.forEach(function (p) {
      style.push({ selector: 'node.perm-' + p.level, style: { 'border-color': p.colour } });
    });
    style.push({ selector: 'node.perm-0', style: { 'border-style': 'dashed' } });
    style.push({ selector: 'node.permanent', style: { 'border-style': 'double', 'border-width': 5 } });
    style.push({ selector: 'node.inactive', style: { 'background-opacity': 0.35 } });
    Object.keys(EDGE_STYLE).forEach(function (kind) {
      var e = EDGE_STYLE[kind];
      style.push({ selector: 'edge.edge-' + kind, style: {
        'line-color': e.colour, 'target-arrow-color': e.colour, 'line-style': e.line, 'width': e.width
      } });
    });
    style.push({ selector: 'node.has-warning', style: {
      'underlay-color': '#ffb300', 'underlay-opacity': 0.5, 'underlay-padding': 6, 'underlay-shape': 'ellipse'
    } });
    style.push({ selector: 'node.has-error', style: {
      'underlay-color': '#e53935', 'underlay-opacity': 0.5, 'underlay-padding': 6, 'underlay-shape': 'ellipse'
    } });
    style.push({ selector: 'node.match', style: {
      'outline-color': '#fdd835', 'outline-width': 5, 'outline-opacity': 1, 'z-index': 10
    } });
    style.push({ selector: 'node.lit', style: {
      'outline-color': '#2e7d32', 'outline-width': 4, 'outline-opacity': 1, 'font-weight': 'bold', 'z-index': 12
    } });
    style.push({ selector: '.unlit', style: { 'opacity': 0.3 } });
    HEAT_COLOURS.forEach(function (colour, index) {
      style.push({ selector: 'node.heat-' + (index + 1), style: { 'background-color': colour } });
    });
    style.push({ selector: '.faded', style: { 'opacity': 0.12 } });
    style.push({ selector: 'node:selected', style: {
      'overlay-color': '#0d47a1', 'overlay-opacity': 0.25, 'overlay-padding': 7, 'z-index': 20,
      'text-background-color': '#bbdefb', 'text-background-opacity': 1
    } });
    style.push({ selector: 'edge.neighbour', style: { 'width': 3.5, 'z-index': 15 } });
    style.push({ selector: '.hidden', style: { 'display': 'none' } });
    return style;
  }

  /* ---- layout --------------------------------------------------------- */

  /* Above these many shown nodes, the tree is drawn radially and the slow force layout is off. */
  var ROWS_LIMIT = 150;
  var FORCE_LIMIT = 500;
  var LABEL_SIZING_LIMIT = 300;
  var ENTRY_AUTOHIDE_LIMIT = 300;

  function chooseLayout(name, shown) {
    if (name === 'force' && shown > FORCE_LIMIT) { return 'radial'; }
    if (name !== 'auto') { return name; }
    return shown > ROWS_LIMIT ? 'radial' : 'outline';
  }

  /* The outline (W87): the containment tree from left to right, one row per leaf in document
     order, each parent on the row of its first child, labels to the right of their node,
     so a small layer fits the canvas with its labels at a readable size. */
  var OUTLINE_ROW = 30;
  var OUTLINE_COLUMN = 190;
  var OUTLINE_FONT = 12;

  function outlinePositions(shownNodes) {
    var order = function (a, b) { return Number(a.id().slice(1)) - Number(b.id().slice(1)); };
    var positions = {};
    var row = 0;
    var place = function (node, depth) {
      var kids = node.outgoers('edge.edge-contains').targets().not('.hidden').filter(function (kid) {
        return !positions.hasOwnProperty(kid.id());
      }).sort(order);
      positions[node.id()] = { x: depth * OUTLINE_COLUMN, y: 0 };
      if (!kids.length) {
        positions[node.id()].y = OUTLINE_ROW * row;
        row += 1;
        return;
      }
      kids.forEach(function (kid) { place(kid, depth + 1); });
      positions[node.id()].y = positions[kids[0].id()].y;
    };
    shownNodes.filter(function (node) {
      return node.incomers('edge.edge-contains').sources().not('.hidden').length === 0;
    }).sort(order).forEach(function (root) { place(root, 0); });
    shownNodes.forEach(function (node) { if (!positions.hasOwnProperty(node.id())) { place(node, 0); } });
    return positions;
  }

  function setLabelSide(cy, outline) {
    var style = cy.style().selector('node').style(outline
      ? { 'text-halign': 'right', 'text-valign': 'center', 'text-margin-x': 5, 'text-margin-y': 0,
          'font-size': OUTLINE_FONT, 'text-max-width': OUTLINE_COLUMN - 60 }
      : { 'text-halign': 'center', 'text-valign': 'bottom', 'text-margin-x': 0, 'text-margin-y': 3,
          'font-size': 10, 'text-max-width': 130 });
    KINDS.forEach(function (kind) {
      /* in the outline no node is taller than its row */
      var k = KIND_STYLE[kind], scale = outline ? Math.min(1, (OUTLINE_ROW - 6) / k.height) : 1;
      style = style.selector('node.kind-' + kind).style({ 'width': k.width * scale, 'height': k.height * scale });
    });
    style.selector('node.kind-entry').style({ 'font-size': outline ? OUTLINE_FONT : 8 }).update();
  }

  /* Depth of every node in the containment tree (0 for files and other roots). */
  function markDepths(cy) {
    var depth = new Map();
    var level = 0;
    var frontier = cy.nodes().filter(function (node) { return node.incomers('edge.edge-contains').length === 0; });
    while (frontier.length) {
      frontier.forEach(function (node) { depth.set(node.id(), level); });
      level += 1;
      frontier = frontier.outgoers('edge.edge-contains').targets().filter(function (node) {
        return !depth.has(node.id());
      });
    }
    cy.nodes().forEach(function (node) {
      node.scratch('_zonemarkDepth', depth.has(node.id()) ? depth.get(node.id()) : level);
    });
  }

  /* Built-in cytoscape layouts only, run on the shown elements; returns the layout used. */
  function runLayout(cy, requested) {
    var shown = cy.elements().not('.hidden');
    var shownNodes = shown.nodes();
    var name = chooseLayout(requested, shownNodes.length);
    var options = { animate: false, fit: true, padding: 30,
                    nodeDimensionsIncludeLabels: shownNodes.length <= LABEL_SIZING_LIMIT };
    setLabelSide(cy, name === 'outline');
    if (name === 'outline') {
      var positions = outlinePositions(shownNodes);
      options.name = 'preset';
      options.positions = function (node) { return positions[node.id()]; };
      shownNodes.layout(options).run();
    } else if (name === 'force') {
      options.name = 'cose';
      options.randomize = false;
      shown.layout(options).run();
    } else if (name === 'rings') {
      var rank = { file: 7, nucleus: 6, rules: 6, module: 5, topic: 5, sub_module: 4, subtopic: 4, other: 3, entry: 1 };
      options.name = 'concentric';
      options.minNodeSpacing = 6;
      options.concentric = function (node) { return rank[node.scratch('_zonemarkKind')] || 2; };
      options.levelWidth = function () { return 1; };
      shown.layout(options).run();
    } else if (name === 'radial') {
      /* Rings by containment depth (files inside, entries outside), in document order. */
      options.name = 'concentric';
      options.minNodeSpacing = 8;
      options.concentric = function (node) { return 1000 - node.scratch('_zonemarkDepth'); };
      options.levelWidth = function () { return 1; };
      shown.layout(options).run();
    } else {
      /* breadthfirst over the containment tree; governs/connects edges are drawn over it. */
      var containment = shownNodes.union(shown.edges('.edge-contains'));
      var roots = shownNodes.filter(function (node) {
        return node.incomers('edge.edge-contains').sources().not('.hidden').length === 0;
      });
      options.name = 'breadthfirst';
      options.directed = true;
      options.avoidOverlap = true;
      options.spacingFactor = 1.0;
      if (roots.length > 0) { options.roots = roots; }
      containment.layout(options).run();
      name = 'tree';
    }
    return name;
  }


  /* ---- neural trace (§N.18): lit nodes, their order, the heat of recorded traces ---- */

  var HEAT_COLOURS = ['#ffe0b2', '#ffb74d', '#fb8c00', '#e64a19', '#b71c1c'];

  function readTrace(graph) {
    var trace = graph.trace;
    if (!trace || typeof trace !== 'object' || Array.isArray(trace)) { return null; }
    var heat = trace.heat && typeof trace.heat === 'object' ? trace.heat : {};
    var counts = heat.counts && typeof heat.counts === 'object' ? heat.counts : {};
    var isItem = function (x) { return x && typeof x === 'object'; };
    return {
      file: trace.file === null || trace.file === undefined ? null : asText(trace.file),
      enabled: trace.enabled === true ? true : (trace.enabled === false ? false : null),
      lit: Array.isArray(trace.lit) ? trace.lit.filter(isItem) : [],
      warnings: Array.isArray(trace.warnings) ? trace.warnings.filter(isItem) : [],
      records: typeof heat.records === 'number' && heat.records > 0 ? heat.records : 0,
      counts: counts
    };
  }

  function litText(item) {
    var parts = [asText(item.label) || asText(item.node)];
    if (item.kind === 'nucleus' && typeof item.order === 'number') { parts.push('activation ' + item.order); }
    if (item.state) { parts.push(asText(item.state)); }
    if (item.action) { parts.push(asText(item.action)); }
    if (item.ref) { parts.push('@ ' + asText(item.ref)); }
    return parts.join(' \u2014 ');
  }

  function nodeLabel(entry) {
    var label = shorten(entry.label, LABEL_LIMIT);
    if (entry.litItems.length) {
      label = entry.litItems.map(function (item) { return item.step; }).join(',') + ' \u25b8 ' + label;
    }
    if (hook.heatOn && entry.heat) { label += ' \u00d7' + entry.heat; }
    if (entry.collapsed) { label += ' (+' + entry.collapsed + ')'; }
    return label;
  }

  function refreshLabels(model, cy) {
    cy.batch(function () {
      model.nodes.forEach(function (entry) {
        cy.getElementById(entry.internalId).data('label', nodeLabel(entry));
      });
    });
  }

  function applyDim(model, cy, on) {
    cy.batch(function () {
      cy.elements().removeClass('unlit');
      if (!on) { return; }
      var anyLit = model.nodes.some(function (entry) { return entry.litItems.length > 0; });
      if (!anyLit) { return; }
      model.nodes.forEach(function (entry) {
        if (!entry.litItems.length) { cy.getElementById(entry.internalId).addClass('unlit'); }
      });
      cy.edges().forEach(function (edge) {
        if (edge.source().hasClass('unlit') || edge.target().hasClass('unlit')) { edge.addClass('unlit'); }
      });
    });
  }

  function applyHeat(model, cy, on) {
    hook.heatOn = on;
    var max = 0;
    model.nodes.forEach(function (entry) { max = Math.max(max, entry.heat); });
    cy.batch(function () {
      model.nodes.forEach(function (entry) {
        var node = cy.getElementById(entry.internalId);
        HEAT_COLOURS.forEach(function (_, index) { node.removeClass('heat-' + (index + 1)); });
        if (on && entry.heat && max) {
          var bucket = Math.max(1, Math.ceil(HEAT_COLOURS.length * entry.heat / max));
          node.addClass('heat-' + bucket);
        }
      });
    });
    refreshLabels(model, cy);
  }

  function renderTrace(model, cy) {
    var trace = model.trace;
    if (!trace) { return; }
    trace.lit.forEach(function (item, index) {
      var step = typeof item.step === 'number' ? item.step : index + 1;
      var entry = item.node === null || item.node === undefined ? null : model.nodeIndex.get(asText(item.node)) || null;
      var lit = { step: step, raw: item, entry: entry };
      if (entry) { entry.litItems.push(lit); cy.getElementById(entry.internalId).addClass('lit'); }
      trace.litItems = (trace.litItems || []).concat([lit]);
    });
    model.nodes.forEach(function (entry) {
      var count = trace.counts.hasOwnProperty(entry.id) ? Number(trace.counts[entry.id]) : 0;
      entry.heat = isFinite(count) && count > 0 ? Math.floor(count) : 0;
    });
    var shown = trace.file !== null || trace.lit.length > 0 || trace.warnings.length > 0;
    if (shown) {
      byId('trace-panel').hidden = false;
      var summary;
      var lit = (trace.litItems || []).length;
      if (trace.enabled === false) {
        summary = 'Tracing is not enabled in this layer: nothing is lit.';
      } else if (trace.file !== null) {
        summary = trace.file + ': ' + plural(lit, 'item') + ' lit, in trace order.';
      } else {
        summary = 'Recorded traces only.';
      }
      byId('trace-summary').textContent = summary;
      var list = byId('trace-lit');
      (trace.litItems || []).forEach(function (lit) {
        var li = make('li');
        li.value = lit.step;
        if (lit.entry) {
          var button = make('button', 'link', litText(lit.raw));
          button.type = 'button';
          button.addEventListener('click', function () { focusNode(model, cy, lit.entry); });
          li.appendChild(button);
        } else {
          li.className = 'no-node';
          li.textContent = litText(lit.raw) + ' (no node of its own)';
        }
        list.appendChild(li);
      });
      var warnings = byId('trace-warnings');
      if (!trace.warnings.length) {
        byId('trace-warnings-title').hidden = true;
      }
      trace.warnings.forEach(function (w) {
        var li = make('li');
        li.appendChild(make('span', 'code', asText(w.code)));
        li.appendChild(document.createTextNode(' ' + asText(w.message)));
        warnings.appendChild(li);
      });
      var dim = byId('trace-dim');
      dim.addEventListener('change', function () { applyDim(model, cy, dim.checked); });
      applyDim(model, cy, dim.checked);
      var legend = byId('legend-trace');
      legend.hidden = false;
      var item = make('span', 'legend-item');
      var swatch = make('span', 'swatch perm-swatch');
      swatch.style.borderColor = '#2e7d32';
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(' lit (step \u25b8 label)'));
      legend.appendChild(item);
    }
    if (trace.records > 0) {
      byId('heat-control').hidden = false;
      byId('heat-records').textContent = String(trace.records);
      var toggle = byId('heat-toggle');
      toggle.addEventListener('change', function () { applyHeat(model, cy, toggle.checked); });
    }
    refreshLabels(model, cy);
  }

  /* ---- page ----------------------------------------------------------- */

  function renderCounts(model, cy) {
    var errors = model.diagnostics.filter(function (d) { return d.severity === 'error'; }).length;
    byId('node-count').textContent = String(cy.nodes().length);
    byId('edge-count').textContent = String(cy.edges().length);
    byId('error-count').textContent = String(errors);
    byId('warning-count').textContent = String(model.diagnostics.length - errors);
    var notes = [];
    if (model.skippedNodes) { notes.push(plural(model.skippedNodes, 'node') + ' skipped (no id or duplicate id)'); }
    if (model.skippedLinks) { notes.push(plural(model.skippedLinks, 'link') + ' skipped (unknown endpoint)'); }
    byId('skipped-note').textContent = notes.join('; ');
  }

  function renderLegend() {
    var permissions = byId('legend-permissions');
    PERMISSIONS.forEach(function (p) {
      var item = make('span', 'legend-item');
      var swatch = make('span', 'swatch perm-swatch');
      swatch.style.borderColor = p.colour;
      if (p.level === 0) { swatch.style.borderStyle = 'dashed'; }
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(' ' + p.name));
      permissions.appendChild(item);
    });
    var halos = byId('legend-halos');
    [['#e53935', 'error'], ['#ffb300', 'warning']].forEach(function (pair) {
      var item = make('span', 'legend-item');
      var swatch = make('span', 'swatch halo-swatch');
      swatch.style.background = pair[0];
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(' ' + pair[1]));
      halos.appendChild(item);
    });
    var edges = byId('legend-edges');
    ['contains', 'governs', 'connects'].forEach(function (kind) {
      var e = EDGE_STYLE[kind];
      var item = make('span', 'legend-item');
      var swatch = make('span', 'edge-swatch');
      swatch.style.borderTopColor = e.colour;
      swatch.style.borderTopStyle = e.line;
      item.appendChild(swatch);
      item.appendChild(document.createTextNode(' ' + kind));
      edges.appendChild(item);
    });
  }

  function renderFilters(model, cy, hideEntries) {
    var filters = byId('filters');
    KINDS.forEach(function (kind) {
      var count = model.kindCounts[kind] || 0;
      if (!count) { return; }
      var label = make('label');
      var box = make('input');
      box.type = 'checkbox';
      box.checked = !(hideEntries && kind === 'entry');
      box.id = 'filter-kind-' + kind;
      box.setAttribute('data-kind', kind);
      box.addEventListener('change', function () { applyKindFilter(cy, kind, box.checked); });
      var swatch = make('span', 'swatch');
      swatch.style.background = KIND_STYLE[kind].colour;
      label.appendChild(box);
      label.appendChild(swatch);
      label.appendChild(document.createTextNode(KIND_STYLE[kind].label + ' '));
      label.appendChild(make('span', 'kind-count', '(' + count + ')'));
      filters.appendChild(label);
    });
  }

  function updateVisibleCount(cy) {
    byId('visible-count').textContent = String(cy.nodes().not('.hidden').length);
  }

  function applyKindFilter(cy, kind, shown) {
    var nodes = cy.nodes('.kind-' + kind);
    if (shown) {
      nodes.removeClass('hidden');
      if (kind === 'entry' && !hook.entriesPlaced) { placeEntriesAroundParents(cy); }
      if (kind === 'entry') { byId('hidden-note').textContent = ''; }
    } else {
      nodes.addClass('hidden');
      nodes.unselect();
    }
    updateVisibleCount(cy);
  }

  /* Entries that were hidden during the layout: a small built-in 'circle' layout around each
     container puts them next to the node that contains them. */
  function placeEntriesAroundParents(cy) {
    cy.batch(function () {
      cy.nodes().not('.kind-entry').forEach(function (parent) {
        var entries = parent.outgoers('edge.edge-contains').targets('.kind-entry');
        if (!entries.length) { return; }
        var centre = parent.position();
        var radius = 28 + 3 * entries.length;
        entries.layout({
          name: 'circle', animate: false, fit: false, avoidOverlap: false, padding: 0,
          boundingBox: { x1: centre.x - radius, y1: centre.y - radius, w: 2 * radius, h: 2 * radius }
        }).run();
      });
    });
    hook.entriesPlaced = true;
  }

  function applySearch(model, cy, query) {
    var needle = query.trim().toLowerCase();
    cy.batch(function () {
      cy.elements().removeClass('match faded');
      if (!needle) { return; }
      model.nodes.forEach(function (entry) {
        var node = cy.getElementById(entry.internalId);
        var hit = entry.label.toLowerCase().indexOf(needle) >= 0 ||
                  entry.moduleId.toLowerCase().indexOf(needle) >= 0;
        node.addClass(hit ? 'match' : 'faded');
      });
      cy.edges().forEach(function (edge) {
        if (edge.source().hasClass('faded') || edge.target().hasClass('faded')) { edge.addClass('faded'); }
      });
    });
    var matches = needle ? cy.nodes('.match').length : 0;
    byId('search-count').textContent = needle ? plural(matches, 'match') : '';
    return matches;
  }

  function addProp(list, name, value) {
    list.appendChild(make('dt', null, name));
    var dd = make('dd', null, value);
    dd.id = 'details-' + name;
    list.appendChild(dd);
  }

  function showDetails(model, cy, entry) {
    var panel = byId('details');
    clear(panel);
    var raw = entry.raw;
    var title = make('h2', null, entry.label);
    title.id = 'details-title';
    panel.appendChild(title);
    var props = make('dl', 'props');
    addProp(props, 'kind', entry.kind === 'other' ? asText(raw.kind) : entry.kind);
    addProp(props, 'id', entry.id);
    addProp(props, 'file', raw.file);
    addProp(props, 'line', raw.line);
    addProp(props, 'permission', entry.level ? 'P' + entry.level : 'none');
    addProp(props, 'state', raw.state === null || raw.state === undefined ? '\u2014' : raw.state);
    addProp(props, 'permanent', raw.permanent === true ? 'yes' : 'no');
    addProp(props, 'module', entry.moduleId || '\u2014');
    if (entry.litItems.length) {
      addProp(props, 'trace', entry.litItems.map(function (lit) { return lit.step + '. ' + litText(lit.raw); })
        .join('; '));
    }
    if (model.trace && model.trace.records) {
      addProp(props, 'heat', 'lit in ' + entry.heat + ' of ' + plural(model.trace.records, 'recorded trace'));
    }
    if (entry.collapsed) { addProp(props, 'collapsed', plural(entry.collapsed, 'entry')); }
    panel.appendChild(props);
    var view = model.view;
    if (entry.collapsed && view.frameUrl) {
      var expand = make('a', 'action', 'Show its ' + plural(entry.collapsed, 'entry'));
      expand.id = 'details-expand';
      expand.href = withParams(view.frameUrl, { expand: entry.id, q: byId('search').value.trim() });
      panel.appendChild(make('p')).appendChild(expand);
    }
    if (view.fileUrl && raw.file) {
      var line = asText(raw.line);
      var open = make('a', 'action', 'Open in the file view');
      open.id = 'details-open';
      open.target = '_top';
      open.href = withParams(view.fileUrl, { path: asText(raw.file), line: line }) + (line ? '#L' + line : '');
      panel.appendChild(make('p')).appendChild(open);
    }

    var node = cy.getElementById(entry.internalId);
    var linkItems = [];
    var edges = node.connectedEdges();
    edges.slice(0, LINK_LIST_LIMIT).forEach(function (edge) {
      var outgoing = edge.source().same(node);
      var other = outgoing ? edge.target() : edge.source();
      var otherEntry = model.nodes[Number(other.id().slice(1))];
      linkItems.push({ text: (outgoing ? '\u2192 ' : '\u2190 ') + edge.data('kind') + ': ' + otherEntry.label,
                       entry: otherEntry });
    });
    if (linkItems.length) {
      panel.appendChild(make('h3', null, 'Links (' + edges.length + ')'));
      var links = make('ul', 'plain');
      links.id = 'details-links';
      linkItems.forEach(function (item) {
        var li = make('li');
        var button = make('button', 'link', item.text);
        button.type = 'button';
        button.addEventListener('click', function () { focusNode(model, cy, item.entry); });
        li.appendChild(button);
        links.appendChild(li);
      });
      if (edges.length > LINK_LIST_LIMIT) {
        links.appendChild(make('li', 'hint', '\u2026 and ' + (edges.length - LINK_LIST_LIMIT) + ' more'));
      }
      panel.appendChild(links);
    }
    if (entry.diagnostics.length) {
      panel.appendChild(make('h3', null, 'Diagnostics (' + entry.diagnostics.length + ')'));
      var list = make('ul', 'plain');
      entry.diagnostics.forEach(function (d) {
        var t = diagnosticText(d.raw);
        list.appendChild(make('li', 'severity-' + d.severity, t.place + ' ' + t.code + ' ' + t.message));
      });
      panel.appendChild(list);
    }
    panel.appendChild(make('h3', null, 'Source'));
    var source = make('pre', null, raw.source);
    source.id = 'details-source';
    panel.appendChild(source);
    panel.scrollTop = 0;
  }

  function selectNode(model, cy, entry) {
    cy.elements().unselect();
    cy.edges().removeClass('neighbour');
    var node = cy.getElementById(entry.internalId);
    node.select();
    node.connectedEdges().addClass('neighbour');
    showDetails(model, cy, entry);
  }

  function focusNode(model, cy, entry) {
    var box = byId('filter-kind-' + entry.kind);
    if (box && !box.checked) { box.checked = true; applyKindFilter(cy, entry.kind, true); }
    var node = cy.getElementById(entry.internalId);
    selectNode(model, cy, entry);
    cy.animate({ center: { eles: node }, zoom: Math.max(cy.zoom(), 1.2) }, { duration: 250 });
  }

  function renderDiagnostics(model, cy) {
    var list = byId('diagnostics');
    if (!model.diagnostics.length) {
      list.appendChild(make('li', 'hint', 'No diagnostics.'));
      return;
    }
    model.diagnostics.forEach(function (d, index) {
      var t = diagnosticText(d.raw);
      var li = make('li', 'severity-' + d.severity + (d.node ? '' : ' unlinked'));
      li.setAttribute('data-index', String(index));
      var holder = li;
      if (d.node) {
        holder = make('button', 'link');
        holder.type = 'button';
        holder.title = 'Show ' + d.node.label;
        holder.addEventListener('click', function () { focusNode(model, cy, d.node); });
        li.appendChild(holder);
      }
      holder.appendChild(document.createTextNode(t.place + ' '));
      holder.appendChild(make('span', 'code', t.code));
      holder.appendChild(document.createTextNode(' ' + t.message));
      list.appendChild(li);
    });
  }

  function markDiagnosticNodes(model, cy) {
    model.nodes.forEach(function (entry) {
      if (!entry.diagnostics.length) { return; }
      var hasError = entry.diagnostics.some(function (d) { return d.severity === 'error'; });
      cy.getElementById(entry.internalId).addClass(hasError ? 'has-error' : 'has-warning');
    });
  }

  function start() {
    var started = performance.now();
    var timings = hook.timings = {};
    var graph = JSON.parse(byId('graph-data').textContent);
    timings.parse = performance.now() - started;
    if (!graph || typeof graph !== 'object') { throw new Error('graph data is not an object'); }
    var model = buildModel(graph);
    /* Big graphs get their first layout before the renderer is mounted: that is about twice
       as fast as laying out under a live canvas. */
    var big = model.nodes.length > LABEL_SIZING_LIMIT;
    var cy = cytoscape({
      headless: true,
      styleEnabled: true,
      elements: model.elements,
      style: graphStyle(model.nodes.length),
      minZoom: 0.02,
      maxZoom: 4,
      boxSelectionEnabled: false,
      hideEdgesOnViewport: model.elements.length > 1500,
      textureOnViewport: model.elements.length > 1500
    });
    model.nodes.forEach(function (entry) {
      cy.getElementById(entry.internalId).scratch('_zonemarkKind', entry.kind);
    });
    markDepths(cy);
    timings.init = performance.now() - started;
    markDiagnosticNodes(model, cy);
    renderTrace(model, cy);
    refreshLabels(model, cy);
    renderCounts(model, cy);
    renderLegend();
    /* A big layer's entries would crowd out its structure: they start hidden (one tick shows them). */
    var hideEntries = big && (model.kindCounts.entry || 0) > ENTRY_AUTOHIDE_LIMIT;
    hook.entriesPlaced = !hideEntries;
    if (hideEntries) {
      cy.nodes('.kind-entry').addClass('hidden');
      byId('hidden-note').textContent = plural(model.kindCounts.entry, 'entry') +
        ' hidden to keep the overview readable: tick \u201centry\u201d to show them.';
    }
    if (model.view.note) {  /* after the hint above, when there is one */
      var hint = byId('hidden-note').textContent;
      byId('hidden-note').textContent = hint ? hint + ' ' + model.view.note : model.view.note;
    }
    renderFilters(model, cy, hideEntries);
    renderDiagnostics(model, cy);
    updateVisibleCount(cy);

    var layoutChoice = byId('layout');
    var relayout = function () {
      hook.layout = runLayout(cy, layoutChoice.value);
      byId('layout-used').textContent = layoutChoice.value === 'auto' || layoutChoice.value !== hook.layout
        ? '(' + hook.layout + ')' : '';
    };
    if (big) { relayout(); }
    cy.mount(byId('cy'));
    if (big) { cy.fit(cy.nodes().not('.hidden'), 30); } else { relayout(); }
    timings.layout = performance.now() - started;
    layoutChoice.addEventListener('change', relayout);
    byId('fit').addEventListener('click', function () { cy.fit(cy.nodes().not('.hidden'), 30); });

    cy.on('tap', 'node', function (event) {
      selectNode(model, cy, model.nodes[Number(event.target.id().slice(1))]);
    });
    cy.on('tap', function (event) {
      if (event.target === cy) { cy.edges().removeClass('neighbour'); }
    });

    var search = byId('search');
    search.addEventListener('input', function () { applySearch(model, cy, search.value); });
    search.addEventListener('keydown', function (event) {
      if (event.key === 'Enter') {
        var matches = cy.nodes('.match').not('.hidden');
        if (matches.length) { cy.animate({ fit: { eles: matches, padding: 40 } }, { duration: 250 }); }
      } else if (event.key === 'Escape') {
        search.value = '';
        applySearch(model, cy, '');
      }
    });

    if (model.view.query) {
      search.value = model.view.query;
      applySearch(model, cy, search.value);
    }

    hook.cy = cy;
    hook.graph = graph;
    hook.nodeById = function (id) {
      var entry = model.nodeIndex.get(asText(id));
      return entry ? cy.getElementById(entry.internalId) : null;
    };
    hook.lit = function () {
      return ((model.trace && model.trace.litItems) || []).map(function (lit) {
        return { step: lit.step, node: lit.entry ? lit.entry.id : null };
      });
    };
    hook.setHeat = function (on) {
      var toggle = byId('heat-toggle');
      toggle.checked = Boolean(on);
      applyHeat(model, cy, toggle.checked);
      return toggle.checked;
    };
    hook.select = function (id) {
      var entry = model.nodeIndex.get(asText(id));
      if (entry) { focusNode(model, cy, entry); }
      return Boolean(entry);
    };
    hook.ready = true;
  }

  function boot() {
    try {
      start();
    } catch (error) {
      hook.error = asText(error && error.message ? error.message : error);
      byId('load-error').textContent = 'The graph could not be shown: ' + hook.error;
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', boot);
  } else {
    boot();
  }
})();
