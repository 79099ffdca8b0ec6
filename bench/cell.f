C     cell.f -- the two small routines kernel.f calls for every cell.
      DOUBLE PRECISION FUNCTION PRESS(RHO, E)
      DOUBLE PRECISION RHO, E, G, T
      PARAMETER (G = 1.4D0)
      T = E / (1.0D0 + 0.01D0 * E * E)
      PRESS = (G - 1.0D0) * RHO * T * (1.0D0 + 0.5D0 * RHO / (1.0D0
     &        + RHO * RHO)) + 1.0D-3 * SQRT(ABS(RHO * T))
      END

      SUBROUTINE FLUX(RW, RE, ES, EN, P, F)
      DOUBLE PRECISION RW, RE, ES, EN, P, F, C, A, B
      C = SQRT(1.4D0 * ABS(P) / (0.5D0 * (RW + RE)))
      A = 0.5D0 * (RE - RW) * C
      B = 0.5D0 * (EN - ES) * C
      F = A + B - 0.25D0 * (ABS(A) - ABS(B)) + 1.0D-2 * P
      END
