import { useState } from 'preact/hooks';

/** What the page shows instead of data when the feed answers 401 or 403: why, and a way in. */
export function SignIn(props: {
  readonly status: number;
  readonly message: string;
  readonly onToken: (token: string) => void;
}) {
  const [token, setToken] = useState('');
  return (
    <main id="main" class="sign-in">
      <h1>{props.status === 401 ? '401 · An admin token is required' : '403 · Not allowed'}</h1>
      <p role="alert">{props.message}</p>
      <p>
        The dashboard shows what the admin API shows, with the same credential: one of the broker's admin
        tokens (<code>ADMIN_TOKEN</code>), or a credential with the <code>admin</code> scope. It is kept in
        this tab only.
      </p>
      <form
        onSubmit={(event) => {
          event.preventDefault();
          if (token.trim() !== '') props.onToken(token.trim());
        }}
      >
        <label for="token">Admin token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
      </form>
    </main>
  );
}
