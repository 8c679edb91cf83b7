// The dashboard is a GraphQL client of /graphql, signed in by the session cookie; the CSRF token
// travels in a header a cross-site page cannot set.
const QUERY = `{
  pipelineSummary { stage currency count totalValue weightedValue probability }
  leads(filter: { limit: 10 }) { data { id company contactEmail score scoreLabel createdAt } }
}`;

// Each cell names its column (data-label), for the stacked layout of narrow screens.
function cell(row, text, label) {
  const td = document.createElement('td');
  td.textContent = text;
  td.dataset.label = label;
  row.appendChild(td);
}

function labels(table) {
  return Array.from(document.querySelectorAll(`${table} thead th`)).map((th) => th.textContent);
}

function money(value, currency) {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
}

function renderPipeline(stages) {
  const body = document.querySelector('#pipeline tbody');
  const columns = labels('#pipeline');
  body.replaceChildren();
  for (const s of stages) {
    const row = document.createElement('tr');
    [s.stage.replace('_', ' '), String(s.count), money(s.totalValue, s.currency), money(s.weightedValue, s.currency), `${s.probability}%`].forEach((t, i) =>
      cell(row, t, columns[i]),
    );
    body.appendChild(row);
  }
  document.getElementById('pipeline-empty').hidden = stages.length > 0;
  drawChart(stages);
}

// A bar per stage: its total value, scaled to the largest. The drawing's coordinates (its viewBox)
// are as wide as the chart is on screen, so text keeps its size and bars fill the width, from a
// phone to a desktop; narrow charts put each label above its bar.
let drawn = [];
function drawChart(stages) {
  drawn = stages;
  const svg = document.getElementById('chart');
  svg.replaceChildren();
  const width = Math.max(200, Math.round(svg.getBoundingClientRect().width) || 760);
  const stacked = width < 560;
  const labelWidth = stacked ? 0 : 150;
  const valueWidth = 110;
  const rowHeight = stacked ? 46 : 34;
  const max = Math.max(1, ...stages.map((s) => s.totalValue));
  const ns = 'http://www.w3.org/2000/svg';
  stages.forEach((s, i) => {
    const y = 10 + i * rowHeight + (stacked ? 18 : 0);
    const length = Math.round((s.totalValue / max) * (width - labelWidth - valueWidth));
    const bar = document.createElementNS(ns, 'rect');
    bar.setAttribute('x', String(labelWidth));
    bar.setAttribute('y', String(y));
    bar.setAttribute('height', '24');
    bar.setAttribute('width', String(Math.max(2, length)));
    const label = document.createElementNS(ns, 'text');
    label.setAttribute('x', '0');
    label.setAttribute('y', String(stacked ? y - 5 : y + 17));
    label.textContent = `${s.stage.replace('_', ' ')} (${s.currency})`;
    const value = document.createElementNS(ns, 'text');
    value.setAttribute('x', String(labelWidth + 6 + length));
    value.setAttribute('y', String(y + 17));
    value.textContent = money(s.totalValue, s.currency);
    svg.append(bar, label, value);
  });
  const height = 20 + stages.length * rowHeight;
  svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
  svg.setAttribute('height', String(height));
}
let resizing;
window.addEventListener('resize', () => {
  clearTimeout(resizing);
  resizing = setTimeout(() => drawChart(drawn), 100);
});

function renderLeads(leads) {
  const body = document.querySelector('#leads tbody');
  const columns = labels('#leads');
  body.replaceChildren();
  for (const lead of leads) {
    const row = document.createElement('tr');
    [lead.company, lead.contactEmail, String(lead.score), lead.scoreLabel, new Date(lead.createdAt).toISOString().slice(0, 10)].forEach((t, i) =>
      cell(row, t, columns[i]),
    );
    body.appendChild(row);
  }
  document.getElementById('leads-empty').hidden = leads.length > 0;
}

async function load() {
  const status = document.getElementById('status');
  try {
    const response = await fetch('/graphql', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': document.querySelector('meta[name="csrf-token"]').content },
      body: JSON.stringify({ query: QUERY }),
    });
    const result = await response.json();
    if (result.errors) throw new Error(result.errors[0].message);
    renderPipeline(result.data.pipelineSummary);
    renderLeads(result.data.leads.data);
    status.textContent = `Updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    status.textContent = `Could not load the dashboard: ${error.message}`;
  }
}

load();
