// The dashboard is a GraphQL client of /graphql, signed in by the session cookie; the CSRF token
// travels in a header a cross-site page cannot set.
const QUERY = `{
  pipelineSummary { stage currency count totalValue weightedValue probability }
  leads(filter: { limit: 10 }) { data { id company contactEmail score scoreLabel createdAt } }
}`;

function cell(row, text) {
  const td = document.createElement('td');
  td.textContent = text;
  row.appendChild(td);
}

function money(value, currency) {
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(value);
}

function renderPipeline(stages) {
  const body = document.querySelector('#pipeline tbody');
  body.replaceChildren();
  for (const s of stages) {
    const row = document.createElement('tr');
    [s.stage.replace('_', ' '), String(s.count), money(s.totalValue, s.currency), money(s.weightedValue, s.currency), `${s.probability}%`].forEach((t) =>
      cell(row, t),
    );
    body.appendChild(row);
  }
  document.getElementById('pipeline-empty').hidden = stages.length > 0;
  // A bar per stage: its total value, scaled to the largest.
  const svg = document.getElementById('chart');
  svg.replaceChildren();
  const max = Math.max(1, ...stages.map((s) => s.totalValue));
  const ns = 'http://www.w3.org/2000/svg';
  stages.forEach((s, i) => {
    const y = 10 + i * 34;
    const width = Math.round((s.totalValue / max) * 520);
    const bar = document.createElementNS(ns, 'rect');
    bar.setAttribute('x', '150');
    bar.setAttribute('y', String(y));
    bar.setAttribute('height', '24');
    bar.setAttribute('width', String(Math.max(2, width)));
    const label = document.createElementNS(ns, 'text');
    label.setAttribute('x', '0');
    label.setAttribute('y', String(y + 17));
    label.textContent = `${s.stage.replace('_', ' ')} (${s.currency})`;
    const value = document.createElementNS(ns, 'text');
    value.setAttribute('x', String(156 + width));
    value.setAttribute('y', String(y + 17));
    value.textContent = money(s.totalValue, s.currency);
    svg.append(bar, label, value);
  });
  svg.setAttribute('height', String(20 + stages.length * 34));
}

function renderLeads(leads) {
  const body = document.querySelector('#leads tbody');
  body.replaceChildren();
  for (const lead of leads) {
    const row = document.createElement('tr');
    [lead.company, lead.contactEmail, String(lead.score), lead.scoreLabel, new Date(lead.createdAt).toISOString().slice(0, 10)].forEach((t) => cell(row, t));
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
