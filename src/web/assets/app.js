// Copy buttons and confirmations; no inline scripts, so the Content-Security-Policy can forbid them.
document.addEventListener('click', (event) => {
  const copy = event.target.closest('[data-copy]');
  if (!copy) return;
  const text = document.getElementById(copy.dataset.copy).textContent.trim();
  navigator.clipboard.writeText(text).then(
    () => {
      copy.textContent = 'Copied';
    },
    () => {
      copy.textContent = 'Select and copy it by hand';
    },
  );
});
document.addEventListener('submit', (event) => {
  const message = event.target.dataset.confirm;
  if (message && !window.confirm(message)) event.preventDefault();
});
// A section that has just appeared (the new key) takes the focus, so keyboard and screen-reader
// users are taken to it instead of staying at the top of the page.
document.querySelector('[data-focus]')?.focus();
// A key form's permissions matter only for a restricted key: shown while "Restricted key" is chosen.
// Without this script they are always shown (and ignored for a secret key).
function showPermissions(form) {
  const permissions = form.querySelector('[data-kind="restricted"]');
  const kind = form.querySelector('input[name="kind"]:checked');
  if (permissions && kind) permissions.hidden = kind.value !== 'restricted';
}
document.querySelectorAll('form.key-form').forEach(showPermissions);
document.addEventListener('change', (event) => {
  if (event.target.name === 'kind') showPermissions(event.target.form);
});
