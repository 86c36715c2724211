#!/usr/bin/env python3
"""Reference epsilons for the certified PLD (accountant/pld_certified_test.go),
computed without any grid or FFT: the hockey-stick divergence of T composed
Poisson-subsampled Gaussian steps is written as a Laplace inversion integral,

    delta(eps) = (1/2pi) Int exp(T log M(c+it) - (c+it) eps) / ((c+it)(c+it+1)) dt,

since (1 - e^{eps-L})_+ = (1/2pi i) Int e^{z(L-eps)} / (z(z+1)) dz on Re z = c > 0,
where M(z) = E_P[e^{zL}] is one step's moment generating function of the
privacy loss L. c is the saddle point of the integrand. M is an integral over
the Gaussian noise, done by the trapezoid rule on a fine grid (spectrally
accurate for these analytic, Gaussian-decaying integrands), in the
cancellation-free form M(z) - 1 = E_N(0,s^2)[rho^a - 1 - a(rho - 1)], with
rho(x) = 1 - q + q exp((2x - 1)/(2 s^2)), a = 1 + z for the remove direction
and a = -z for add. The outer integral is also a trapezoid rule, its step a
fraction of both the Gaussian width of the integrand and the distance c to
the pole at 0, extended until the integrand is below 1e-18 of its peak.
epsilon(delta) is solved by the secant method on log delta to a relative
1e-10. The discretisation errors of both quadratures are far below 1e-9
relative (halving both steps changes no printed digit at the points
committed); the result is the true epsilon of the continuous mechanism (the
larger of the two directions) to about 1e-9, not a bound.

Usage: python3 pld_laplace_reference.py q sigma T delta [q sigma T delta ...]
prints one JSON object per point (plain python3, no numpy)."""
import cmath, json, math, sys


def expm1c(w):
    """e^w - 1 for complex w without cancellation at small |w|."""
    a, b = w.real, w.imag
    em = math.expm1(a)
    s = math.sin(b / 2)
    return complex(em * math.cos(b) - 2 * s * s, math.exp(a) * math.sin(b))


class Step:
    def __init__(self, q, sigma, fine=1):
        self.q, self.s = q, sigma
        self.fine = fine

    def mgf_m1(self, a):
        """F(a) - 1 = E[rho^a] - 1 for complex a, x ~ N(0, s^2)."""
        q, s = self.q, self.s
        ar = max(a.real, 0.0)
        lo, hi = -14 * s - 1, ar * s * s + 14 * s + 1
        dx = s / (40 * self.fine)
        n = int((hi - lo) / dx) + 1
        tot = 0j
        c = 1 / (s * math.sqrt(2 * math.pi))
        for i in range(n + 1):
            x = lo + i * dx
            r1 = q * math.expm1((2 * x - 1) / (2 * s * s))  # rho - 1
            lr = math.log1p(r1)
            w = 0.5 if i == 0 or i == n else 1.0
            al, lg = a * lr, -x * x / (2 * s * s)
            if al.real > 1:  # no cancellation: keep e^{a log rho} with the Gaussian factor
                tot += w * c * (cmath.exp(al + lg) - (1 + a * r1) * math.exp(lg))
            else:
                tot += w * c * (expm1c(al) - a * r1) * math.exp(lg)
        return tot * dx

    def logM(self, z, remove):
        a = 1 + z if remove else -z
        if self.q == 1:
            # rho = exp((2x-1)/(2s^2)): E[rho^a] = exp(a(a-1)/(2 s^2)).
            return a * (a - 1) / (2 * self.s * self.s)
        m = self.mgf_m1(complex(a))
        return cmath.log1p(m) if hasattr(cmath, "log1p") else cmath.log(1 + m)


def delta_dir(step, T, eps, remove, fine=1):
    def f(c):  # log of the integrand's modulus at t = 0
        return T * step.logM(complex(c), remove).real - c * eps - math.log(c * (c + 1))
    # saddle point: minimise f over c > 0 (golden section on log c)
    a, b = math.log(1e-6), math.log(500)
    g = (math.sqrt(5) - 1) / 2
    x1, x2 = b - g * (b - a), a + g * (b - a)
    f1, f2 = f(math.exp(x1)), f(math.exp(x2))
    for _ in range(80):
        if f1 < f2:
            b, x2, f2 = x2, x1, f1
            x1 = b - g * (b - a)
            f1 = f(math.exp(x1))
        else:
            a, x1, f1 = x1, x2, f2
            x2 = a + g * (b - a)
            f2 = f(math.exp(x2))
        if b - a < 1e-7:
            break
    c = math.exp((a + b) / 2)
    # Gaussian width of the integrand in t: second derivative of T log M.
    e = 1e-3 * c
    k2 = T * (step.logM(complex(c + e), remove).real - 2 * step.logM(complex(c), remove).real
              + step.logM(complex(c - e), remove).real) / (e * e)
    width = 1 / math.sqrt(max(k2, 1e-300))
    dt = min(0.25 * width, c / 8, 0.5) / fine
    base = T * step.logM(complex(c), remove).real - c * eps

    def integrand(t):
        z = complex(c, t)
        v = T * step.logM(z, remove) - z * eps - base
        return (cmath.exp(v) / (z * (z + 1))).real

    peak = abs(integrand(0.0))
    tot = 0.5 * integrand(0.0)
    k, small = 1, 0
    while small < 20 and k < 200000:
        v = integrand(k * dt)
        tot += v
        small = small + 1 if abs(v) < 1e-18 * peak else 0
        k += 1
    return math.exp(base) * tot * dt / math.pi


def epsilon(q, sigma, T, delta, fine=1):
    step = Step(q, sigma, fine)
    out = {}
    for remove in (True, False):
        if not remove and q == 1:
            continue  # the two directions coincide at q = 1
        # start: mean + sqrt(2 var log(1/delta)) of the composed loss
        h = 1e-4
        k1 = T * (step.logM(complex(h), remove).real - step.logM(complex(-h), remove).real) / (2 * h)
        k2 = T * (step.logM(complex(h), remove).real + step.logM(complex(-h), remove).real) / (h * h)
        guess = max(k1 + math.sqrt(2 * max(k2, 0) * math.log(1 / delta)), 1e-3)

        def ld(e):
            d = delta_dir(step, T, e, remove, fine)
            return math.log(d) - math.log(delta) if d > 0 else -1e3
        # bracket, then Illinois regula falsi on log delta
        ea, eb = guess, guess
        fa = fb = ld(guess)
        while fa < 0:
            ea /= 1.5
            fa = ld(ea)
        while fb > 0:
            eb *= 1.5
            fb = ld(eb)
        side = 0
        e1 = eb
        for _ in range(200):
            e1 = (ea * fb - eb * fa) / (fb - fa)
            f1 = ld(e1)
            if f1 > 0:
                ea, fa = e1, f1
                if side == 1:
                    fb /= 2
                side = 1
            else:
                eb, fb = e1, f1
                if side == -1:
                    fa /= 2
                side = -1
            if eb - ea <= 1e-11 * eb or f1 == 0:
                break
        out["remove" if remove else "add"] = e1
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    for i in range(0, len(args), 4):
        q, s, t, d = float(args[i]), float(args[i + 1]), int(float(args[i + 2])), float(args[i + 3])
        dirs = epsilon(q, s, t, d)
        print(json.dumps({"q": q, "sigma": s, "steps": t, "delta": d, "epsilon": max(dirs.values()), "directions": dirs}), flush=True)
